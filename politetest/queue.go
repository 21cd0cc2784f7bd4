package politetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/frontier"
	"github.com/polite-go/polite/pace"
)

// NewQueue makes a Queue for a case of [RunQueue]: a [frontier.Queue]
// whose URLs are fetched through the transport it returns, which it makes
// with polite.New(base, opts...) and whatever options the Queue needs
// beside them (a Pacer that it reads, for one), and whose options are o.
// A Queue that keeps state outside the process must start each case with
// none.
type NewQueue func(base http.RoundTripper, opts []polite.Option, o frontier.Options) (frontier.Queue, *polite.PoliteTransport)

// RunQueue checks the Queues that newQueue makes against every case of
// the [frontier.Queue] contract, each a subtest named for the rule it
// checks: first in first out per host, one URL of a host out at a time,
// no URL handed out before its host can start nor left to wait in the
// transport, refusals dropped before they take a turn, Requeue, the
// bounds, Dedup, Next within its context, and ErrEmpty.
//
// Each case runs in a [testing/synctest] bubble over a fake web that
// answers at once, so the Queue and its transport must read the time
// with the time package and wait with its timers; a Queue that keeps its
// clock elsewhere must offer its tests a way to read the bubble's
// instead. A Queue that is an [io.Closer] is closed at the end of its
// case, and must leave no goroutine in the bubble.
func RunQueue(t *testing.T, newQueue NewQueue) {
	for _, c := range queueCases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c.run(t, &queueEnv{t: t, newQueue: newQueue})
			})
		})
	}
}

// queuePace is the cases' pacing: 1s between two starts to a host, no
// jitter, no latency term.
var queuePace = pace.Policy{BaseDelay: time.Second, Jitter: pace.None, LatencyFactor: pace.None}

// A queueEnv makes a case's Queue over its fake web, and closes it when
// the case ends.
type queueEnv struct {
	t        *testing.T
	newQueue NewQueue
}

// queue returns a Queue over web, with o, paced by queuePace.
func (e *queueEnv) queue(web *fakeWeb, o frontier.Options, opts ...polite.Option) (frontier.Queue, *polite.PoliteTransport) {
	opts = append([]polite.Option{polite.WithPacing(queuePace), polite.WithUserAgent("QueueTest/1.0")}, opts...)
	q, tr := e.newQueue(web, opts, o)
	if c, ok := q.(io.Closer); ok {
		e.t.Cleanup(func() { c.Close() })
	}
	return q, tr
}

// A fakeStart is a request as the fake web saw it start.
type fakeStart struct {
	url    string
	at     time.Time
	status int
}

// fakeWeb is a base RoundTripper that answers at once: a page lists the
// links that links gives it, one a line; a robots.txt is robots[host], or
// 404; the first page request of a host in pause answers 429 with a
// Retry-After of that many seconds.
type fakeWeb struct {
	robots map[string]string   // by host
	links  map[string][]string // by URL
	pause  map[string]int      // seconds, by host

	mu     sync.Mutex // guards starts and paused
	starts []fakeStart
	paused map[string]bool
}

func (w *fakeWeb) RoundTrip(req *http.Request) (*http.Response, error) {
	host, status, body := req.URL.Host, http.StatusOK, ""
	header := http.Header{}
	w.mu.Lock()
	switch {
	case req.URL.Path == "/robots.txt":
		r, ok := w.robots[host]
		if !ok {
			status = http.StatusNotFound
		}
		body = r
	case w.pause[host] > 0 && !w.paused[host]:
		if w.paused == nil {
			w.paused = make(map[string]bool)
		}
		w.paused[host] = true
		status = http.StatusTooManyRequests
		header.Set("Retry-After", strconv.Itoa(w.pause[host]))
	default:
		body = strings.Join(w.links[req.URL.String()], "\n")
	}
	w.starts = append(w.starts, fakeStart{url: req.URL.String(), at: time.Now(), status: status})
	w.mu.Unlock()
	return &http.Response{StatusCode: status, Header: header, Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
}

// log returns the requests started so far.
func (w *fakeWeb) log() []fakeStart {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.starts)
}

// pages returns the requests started so far, robots.txt fetches left out.
func (w *fakeWeb) pages() []fakeStart {
	return slices.DeleteFunc(w.log(), func(s fakeStart) bool { return strings.HasSuffix(s.url, "/robots.txt") })
}

// A handout is a turn of a worker: when Next handed its URL out and when
// the worker ended it.
type handout struct {
	url       string
	out, done time.Time
}

// queueCrawler runs workers over a Queue: each fetches the URL it is
// handed, adds the page's links, holds the turn for hold, and ends it by
// Requeue for a 429 answered to a URL's first try, by Done otherwise.
type queueCrawler struct {
	q      frontier.Queue
	client *http.Client
	hold   time.Duration

	mu       sync.Mutex // guards the fields below
	handouts []handout
	tries    map[string]int
	errs     []error // Next's, other than ErrEmpty
}

func newQueueCrawler(q frontier.Queue, tr http.RoundTripper) *queueCrawler {
	return &queueCrawler{q: q, client: &http.Client{Transport: tr}, tries: make(map[string]int)}
}

// run runs workers until Next fails for each of them.
func (c *queueCrawler) run(ctx context.Context, workers int) {
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				t, err := c.q.Next(ctx)
				if err != nil {
					if !errors.Is(err, frontier.ErrEmpty) {
						c.mu.Lock()
						c.errs = append(c.errs, err)
						c.mu.Unlock()
					}
					return
				}
				c.visit(ctx, t)
			}
		})
	}
	wg.Wait()
}

func (c *queueCrawler) visit(ctx context.Context, t frontier.Turn) {
	out := time.Now()
	c.mu.Lock()
	c.tries[t.URL]++
	tries := c.tries[t.URL]
	c.mu.Unlock()
	status := 0
	if resp, err := c.client.Get(t.URL); err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		status = resp.StatusCode
		for _, l := range strings.Fields(string(body)) {
			c.q.Add(ctx, l)
		}
	}
	time.Sleep(c.hold)
	c.mu.Lock()
	c.handouts = append(c.handouts, handout{url: t.URL, out: out, done: time.Now()})
	c.mu.Unlock()
	if status == http.StatusTooManyRequests && tries == 1 {
		t.Requeue()
		return
	}
	t.Done()
}

// handed returns the URLs handed out, in the order their turns ended.
func (c *queueCrawler) handed() []handout {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.handouts)
}

// check fails t when a Next call failed.
func (c *queueCrawler) check(t *testing.T) {
	t.Helper()
	if len(c.errs) > 0 {
		t.Fatalf("Next failed: %v", c.errs)
	}
}

// hostOf returns the host of an http URL written as the cases write them.
func hostOf(rawURL string) string {
	h, _, _ := strings.Cut(strings.TrimPrefix(rawURL, "http://"), "/")
	return h
}

// mustAdd adds every URL to q, failing t when one is not queued.
func mustAdd(t *testing.T, q frontier.Queue, urls ...string) {
	t.Helper()
	for _, u := range urls {
		if ok, err := q.Add(context.Background(), u); !ok || err != nil {
			t.Fatalf("Add(%s) = %v, %v; want true, nil", u, ok, err)
		}
	}
}

// chainOf makes host a chain of n pages in links: / links to /1, /1 to
// /2, and so on.
func chainOf(links map[string][]string, host string, n int) {
	prev := "http://" + host + "/"
	for i := 1; i <= n; i++ {
		u := "http://" + host + "/" + strconv.Itoa(i)
		links[prev] = append(links[prev], u)
		prev = u
	}
}

// A queueCase is one case of RunQueue: a subtest of its own, since a
// bubble cannot run subtests.
type queueCase struct {
	name string
	run  func(t *testing.T, e *queueEnv)
}

var queueCases = slices.Concat([]queueCase{
	{"each host's URLs come first in first out", queueFIFO},
	{"a host has one URL out at a time", queueOneOut},
	{"a URL is handed out when its host can start, and starts then", queuePaced},
	{"a paused host takes no worker, and its requeued URL comes first", queuePaused},
	{"refusals are dropped before they take a turn", queueRefusals},
	{"Requeue gives the URL back at the head; a turn ends once", queueRequeue},
	{"Dedup off queues a URL each time", func(t *testing.T, e *queueEnv) { queueDedup(t, e, false) }},
	{"Dedup queues a URL once", func(t *testing.T, e *queueEnv) { queueDedup(t, e, true) }},
	{"Next returns ErrEmpty when nothing was added", queueNothingAdded},
	{"Next waiting while a turn is out gets the link added before Done", func(t *testing.T, e *queueEnv) { queueEmpty(t, e, true) }},
	{"Next waiting while a turn is out returns ErrEmpty at Done", func(t *testing.T, e *queueEnv) { queueEmpty(t, e, false) }},
}, boundCases(), contextCases())

func queueFIFO(t *testing.T, e *queueEnv) {
	web := &fakeWeb{}
	q, tr := e.queue(web, frontier.Options{})
	added := map[string][]string{}
	for i := range 4 {
		for _, h := range []string{"a", "b", "c"} {
			u := fmt.Sprintf("http://%s/%d", h, (i*3)%4)
			mustAdd(t, q, u)
			added[h] = append(added[h], u)
		}
	}
	c := newQueueCrawler(q, tr)
	c.run(context.Background(), 3)
	c.check(t)
	got := map[string][]string{}
	for _, h := range c.handed() {
		got[hostOf(h.url)] = append(got[hostOf(h.url)], h.url)
	}
	for h, want := range added {
		if !slices.Equal(got[h], want) {
			t.Errorf("host %s handed out %q; want %q", h, got[h], want)
		}
	}
}

func queueOneOut(t *testing.T, e *queueEnv) {
	web := &fakeWeb{}
	q, tr := e.queue(web, frontier.Options{})
	for i := range 4 {
		mustAdd(t, q, fmt.Sprintf("http://a/%d", i), fmt.Sprintf("http://b/%d", i))
	}
	c := newQueueCrawler(q, tr)
	c.hold = 2500 * time.Millisecond // past the pace: only the turn holds the host
	c.run(context.Background(), 4)
	c.check(t)
	hs := c.handed()
	if len(hs) != 8 {
		t.Fatalf("%d turns; want 8", len(hs))
	}
	for i, x := range hs {
		for _, y := range hs[i+1:] {
			if hostOf(x.url) == hostOf(y.url) && x.out.Before(y.done) && y.out.Before(x.done) {
				t.Errorf("%s out from %v to %v, and %s from %v to %v: two URLs of a host out at once",
					x.url, x.out, x.done, y.url, y.out, y.done)
			}
		}
	}
}

func queuePaced(t *testing.T, e *queueEnv) {
	web := &fakeWeb{links: map[string][]string{}, robots: map[string]string{"a": "User-agent: *\nAllow: /\n"}}
	for _, h := range []string{"a", "b"} {
		chainOf(web.links, h, 3)
	}
	q, tr := e.queue(web, frontier.Options{Dedup: true})
	mustAdd(t, q, "http://a/", "http://b/")
	c := newQueueCrawler(q, tr)
	c.run(context.Background(), 3)
	c.check(t)
	pages := web.pages()
	if len(pages) != 8 {
		t.Fatalf("%d pages requested; want 8", len(pages))
	}
	handed := map[string]time.Time{}
	for _, h := range c.handed() {
		handed[h.url] = h.out
	}
	for _, p := range pages {
		if out := handed[p.url]; !p.at.Equal(out) {
			t.Errorf("%s started %v after it was handed out; want at once", p.url, p.at.Sub(out))
		}
	}
	last := map[string]time.Time{}
	for _, p := range web.log() { // robots.txt fetches are paced too
		h := hostOf(p.url)
		if l, ok := last[h]; ok && p.at.Sub(l) < queuePace.BaseDelay {
			t.Errorf("%s started %v after the page before it; want the pace, %v", p.url, p.at.Sub(l), queuePace.BaseDelay)
		}
		last[h] = p.at
	}
}

func queuePaused(t *testing.T, e *queueEnv) {
	web := &fakeWeb{links: map[string][]string{}, pause: map[string]int{"a": 30}}
	for _, h := range []string{"a", "b", "c"} {
		chainOf(web.links, h, 4)
	}
	q, tr := e.queue(web, frontier.Options{Dedup: true})
	mustAdd(t, q, "http://a/", "http://b/", "http://c/")
	t0 := time.Now()
	c := newQueueCrawler(q, tr)
	c.run(context.Background(), 2)
	c.check(t)
	pages := web.pages()
	if got, want := len(pages), 3*5+1; got != want {
		t.Fatalf("%d pages requested; want %d", got, want)
	}
	var retry, lastOther time.Time
	seen := 0
	for _, p := range pages {
		if hostOf(p.url) != "a" {
			lastOther = p.at
			continue
		}
		if seen++; seen == 2 {
			retry = p.at
			if p.url != "http://a/" {
				t.Errorf("a's page after the pause is %s; want http://a/, requeued at the head", p.url)
			}
		}
	}
	if got := retry.Sub(t0); got < 30*time.Second {
		t.Errorf("a's front page tried again at +%v; want no sooner than its Retry-After, 30s", got)
	}
	if !lastOther.Before(retry) {
		t.Errorf("b and c done at +%v, a tried again at +%v; want b and c crawled during the pause", lastOther.Sub(t0), retry.Sub(t0))
	}
}

func queueRefusals(t *testing.T, e *queueEnv) {
	web := &fakeWeb{robots: map[string]string{"a": "User-agent: *\nDisallow: /private/\n"}}
	var mu sync.Mutex
	var refused []string
	q, tr := e.queue(web, frontier.Options{Refused: func(u string, d polite.Decision) {
		mu.Lock()
		defer mu.Unlock()
		refused = append(refused, u)
		if d.Rule != "Disallow: /private/" {
			t.Errorf("%s refused by %q; want Disallow: /private/", u, d.Rule)
		}
	}})
	mustAdd(t, q, "http://a/private/1", "http://a/x", "http://a/private/2", "http://a/y")
	c := newQueueCrawler(q, tr)
	c.run(context.Background(), 1)
	c.check(t)
	var handed []string
	for _, h := range c.handed() {
		handed = append(handed, h.url)
	}
	if want := []string{"http://a/x", "http://a/y"}; !slices.Equal(handed, want) {
		t.Errorf("handed out %q; want %q", handed, want)
	}
	if want := []string{"http://a/private/1", "http://a/private/2"}; !slices.Equal(refused, want) {
		t.Errorf("refused %q; want %q", refused, want)
	}
	for _, p := range web.pages() {
		if strings.Contains(p.url, "/private/") {
			t.Errorf("%s was requested", p.url)
		}
	}
}

func queueRequeue(t *testing.T, e *queueEnv) {
	q, _ := e.queue(&fakeWeb{}, frontier.Options{})
	mustAdd(t, q, "http://a/1", "http://a/2")
	ctx := context.Background()
	next := func(want string) frontier.Turn {
		t.Helper()
		turn, err := q.Next(ctx)
		if err != nil || turn.URL != want {
			t.Fatalf("Next = %q, %v; want %s", turn.URL, err, want)
		}
		return turn
	}
	first := next("http://a/1")
	first.Requeue()
	again := next("http://a/1")
	first.Requeue() // a turn that has ended: nothing
	first.Done()    // nor this, while the host's next turn is out
	short, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if turn, err := q.Next(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next while http://a/1 is out again = %q, %v; want it to wait", turn.URL, err)
	}
	again.Done()
	again.Done()
	again.Requeue()
	next("http://a/2").Done()
	if turn, err := q.Next(ctx); !errors.Is(err, frontier.ErrEmpty) {
		t.Errorf("Next after the last Done = %q, %v; want ErrEmpty", turn.URL, err)
	}
}

// boundCases are the cases of Add's bounds: a URL past one is refused
// with ErrFull or ErrHostFull and not marked seen, the URLs queued are
// kept, a URL out counts until Done, and Requeue never overflows.
func boundCases() []queueCase {
	type step struct {
		op   string // "add URL", "next", "done", "requeue"
		want error  // for add
	}
	add := func(u string, want error) step { return step{"add " + u, want} }
	tests := []struct {
		name  string
		opts  frontier.Options
		steps []step
		left  int // URLs handed out when the crawl is run after the steps
	}{
		{"per host", frontier.Options{MaxHostURLs: 2}, []step{
			add("http://a/1", nil), add("http://a/2", nil), add("http://a/3", frontier.ErrHostFull), add("http://b/1", nil),
		}, 3},
		{"in all", frontier.Options{MaxURLs: 3}, []step{
			add("http://a/1", nil), add("http://a/2", nil), add("http://b/1", nil), add("http://b/2", frontier.ErrFull), add("http://c/1", frontier.ErrFull),
		}, 3},
		{"a URL out counts until Done", frontier.Options{MaxURLs: 1}, []step{
			add("http://a/1", nil), {op: "next"}, add("http://a/2", frontier.ErrFull), {op: "done"}, add("http://a/2", nil),
		}, 1},
		{"an overflowing URL is not marked seen", frontier.Options{MaxURLs: 1, Dedup: true}, []step{
			add("http://a/1", nil), add("http://b/1", frontier.ErrFull), {op: "next"}, {op: "done"}, add("http://b/1", nil),
		}, 1},
		{"a URL requeued into a full frontier is kept", frontier.Options{MaxURLs: 2}, []step{
			add("http://a/1", nil), add("http://a/2", nil), {op: "next"}, add("http://b/1", frontier.ErrFull), {op: "requeue"},
		}, 2},
	}
	var out []queueCase
	for _, tt := range tests {
		out = append(out, queueCase{"Add's bounds: " + tt.name, func(t *testing.T, e *queueEnv) {
			q, tr := e.queue(&fakeWeb{}, tt.opts)
			var turn frontier.Turn
			for i, s := range tt.steps {
				switch op, u, _ := strings.Cut(s.op, " "); op {
				case "add":
					queued, err := q.Add(context.Background(), u)
					if !errors.Is(err, s.want) {
						t.Fatalf("step %d: Add(%s) = %v; want %v", i, u, err, s.want)
					}
					if s.want != nil && queued {
						t.Fatalf("step %d: Add(%s) queued a URL past a bound", i, u)
					}
				case "next":
					var err error
					if turn, err = q.Next(context.Background()); err != nil {
						t.Fatalf("step %d: Next: %v", i, err)
					}
				case "done":
					turn.Done()
				case "requeue":
					turn.Requeue()
				}
			}
			c := newQueueCrawler(q, tr)
			c.run(context.Background(), 1)
			c.check(t)
			if got := len(c.handed()); got != tt.left {
				t.Errorf("%d URLs handed out after the steps; want %d", got, tt.left)
			}
		}})
	}
	return out
}

func queueDedup(t *testing.T, e *queueEnv, dedup bool) {
	q, tr := e.queue(&fakeWeb{}, frontier.Options{Dedup: dedup})
	ctx := context.Background()
	var queued []bool
	for _, u := range []string{"http://a/1", "http://a/2", "http://a/1"} {
		ok, err := q.Add(ctx, u)
		if err != nil {
			t.Fatalf("Add(%s): %v", u, err)
		}
		queued = append(queued, ok)
	}
	turn, err := q.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	turn.Done()
	again, err := q.Add(ctx, "http://a/1") // handed out and done
	if err != nil {
		t.Fatal(err)
	}
	queued = append(queued, again)
	want := []bool{true, true, true, true}
	if dedup {
		want = []bool{true, true, false, false}
	}
	if !slices.Equal(queued, want) {
		t.Errorf("Add reported %v; want %v", queued, want)
	}
	c := newQueueCrawler(q, tr)
	c.run(ctx, 1)
	c.check(t)
	left := 3 // a/2, a/1 added twice
	if dedup {
		left = 1 // a/2
	}
	if got := len(c.handed()); got != left {
		t.Errorf("%d URLs handed out after the first; want %d", got, left)
	}
}

// contextCases are the cases of Next's context: Next waiting for a paused
// host returns its context's error when the context ends, at that moment,
// and the URL stays queued for a later call.
func contextCases() []queueCase {
	tests := []struct {
		name  string
		ctx   func() (context.Context, context.CancelFunc)
		after time.Duration // when Next should return
		want  error
	}{
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 5*time.Second)
		}, 5 * time.Second, context.DeadlineExceeded},
		{"cancelled while waiting", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(2*time.Second, cancel)
			return ctx, cancel
		}, 2 * time.Second, context.Canceled},
		{"ended before", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		}, 0, context.Canceled},
	}
	var out []queueCase
	for _, tt := range tests {
		out = append(out, queueCase{"Next within its context: " + tt.name, func(t *testing.T, e *queueEnv) {
			web := &fakeWeb{pause: map[string]int{"a": 60}}
			q, tr := e.queue(web, frontier.Options{})
			resp, err := (&http.Client{Transport: tr}).Get("http://a/first") // 429: a is paused for a minute
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			mustAdd(t, q, "http://a/1")

			ctx, cancel := tt.ctx()
			defer cancel()
			t0 := time.Now()
			_, err = q.Next(ctx)
			if !errors.Is(err, tt.want) {
				t.Errorf("Next = %v; want %v", err, tt.want)
			}
			if got := time.Since(t0); got != tt.after {
				t.Errorf("Next returned after %v; want %v", got, tt.after)
			}
			turn, err := q.Next(context.Background())
			if err != nil || turn.URL != "http://a/1" {
				t.Fatalf("Next = %q, %v; want http://a/1, kept", turn.URL, err)
			}
			if got := time.Since(t0); got < time.Minute-time.Second {
				t.Errorf("http://a/1 handed out at +%v; want after the pause", got)
			}
			turn.Done()
		}})
	}
	return out
}

func queueNothingAdded(t *testing.T, e *queueEnv) {
	q, _ := e.queue(&fakeWeb{}, frontier.Options{})
	if turn, err := q.Next(context.Background()); !errors.Is(err, frontier.ErrEmpty) {
		t.Errorf("Next on an empty Queue = %q, %v; want ErrEmpty", turn.URL, err)
	}
}

func queueEmpty(t *testing.T, e *queueEnv, link bool) {
	q, _ := e.queue(&fakeWeb{}, frontier.Options{})
	mustAdd(t, q, "http://a/1")
	first, err := q.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got frontier.Turn
	var nextErr error
	done := make(chan struct{})
	go func() {
		got, nextErr = q.Next(context.Background())
		close(done)
	}()
	time.Sleep(10 * time.Second)
	select {
	case <-done:
		t.Fatalf("Next returned %q, %v while a turn was out; want it to wait", got.URL, nextErr)
	default:
	}
	if link {
		mustAdd(t, q, "http://b/1")
	}
	first.Done()
	<-done
	switch {
	case link && (nextErr != nil || got.URL != "http://b/1"):
		t.Errorf("Next = %q, %v; want http://b/1", got.URL, nextErr)
	case !link && !errors.Is(nextErr, frontier.ErrEmpty):
		t.Errorf("Next = %q, %v; want ErrEmpty", got.URL, nextErr)
	}
	if link {
		got.Done()
	}
}
