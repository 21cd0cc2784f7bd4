package polite

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/polite-go/polite/pace"
	"go.uber.org/goleak"
)

// TestTransportProperties drives a PoliteTransport, on synctest's fake
// clock, through random configurations and random traffic over many hosts:
// concurrent requests with and without bodies, some with opaque URLs,
// cancelled before the call, at random moments or under deadlines,
// answered after random latencies with 2xx, 404, 429 and 503 with and
// without Retry-After (seconds and HTTP-dates), other 5xx, reset
// connections, panics, (nil, nil) and a response together with an error;
// robots.txt files whose Crawl-delay changes from one fetch to the next,
// or that answer 404, 429, 503, a reset or a panic; and in some seeds a
// host paused for an hour, then sent a burst of requests with short
// deadlines to many of its origins. The Limits are small, so that hosts
// and robots.txt files are forgotten and fetched again. What the base
// transport saw, and what RoundTrip returned, must keep these invariants,
// which checkTransportSequence states exactly:
//
//   - in flight: no host has more than MaxInFlight requests in the base;
//   - gaps: consecutive starts to a host are at least its floor apart;
//   - Retry-After: no request to a host starts while a Retry-After it
//     answered is running;
//   - bodies: every request body and every response body the base made is
//     closed exactly once, whatever path the request took;
//   - results: RoundTrip returns a response or an error, never both and
//     never neither; the response is the base's, the error the base's or
//     one the package documents, and a panic of the base reaches the caller
//     of that request alone; a refused request never reaches the base, nor
//     does a disallowed URL of an origin whose robots.txt always answers;
//   - liveness: every request ends, and then no host has a request in
//     flight or waiting;
//   - bounds, at every request's arrival: no robots.txt fetch runs that no
//     request waits for and the base does not hold; the robots cache holds
//     at most twice the larger of MaxOrigins and the most fetches that can
//     have run at once, plus the requests under way; and the goroutines
//     are at most one per request under way, one per fetch, and one per
//     robots.txt request in the base, with its own;
//   - goroutines: none is left behind (synctest.Test fails a bubble that
//     leaves one blocked; goleak checks outside the bubbles).
//
// A failing seed prints its configuration and the events of the host at
// fault, in order. Jitter draws and the order of goroutines at one instant
// are not seeded, so a seed replays its traffic and configuration exactly
// but its interleavings only closely; to try many seeds, run
//
//	go test -run TestTransportProperties -args -prop.from 100 -prop.seeds 3000
func TestTransportProperties(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for i := range *propSeeds {
		seed := *propFrom + uint64(i)
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { checkTransportSequence(t, seed) })
		})
	}
}

var (
	propFrom  = flag.Uint64("prop.from", 0, "TestTransportProperties: first seed")
	propSeeds = flag.Int("prop.seeds", 30, "TestTransportProperties: number of seeds")
)

// propUA is the transport's User-Agent; robots.txt groups name its token.
const propUA = "PropBot/1.0"

// propConfig is one seed's configuration of the transport.
type propConfig struct {
	baseDelay, maxDelay, maxCrawlDelay time.Duration
	jitter                             float64
	maxInFlight, maxHosts              int
	robotsTTL, robotsTimeout           time.Duration
	failure                            FailurePolicy
}

func (c propConfig) options() []Option {
	return []Option{
		WithUserAgent(propUA),
		WithPacing(pace.Policy{BaseDelay: noneIfZero(c.baseDelay), MaxDelay: noneIfZero(c.maxDelay),
			MaxCrawlDelay: noneIfZero(c.maxCrawlDelay), Jitter: noneIfZero(c.jitter), MaxInFlight: c.maxInFlight}),
		WithLimits(Limits{MaxKeys: c.maxHosts, MaxOrigins: c.maxHosts}),
		WithRobotsTTL(c.robotsTTL), WithRobotsTimeout(c.robotsTimeout), WithRobotsFailure(c.failure, c.failure),
	}
}

func (c propConfig) String() string {
	return fmt.Sprintf("BaseDelay %v, Jitter %v, MaxDelay %v, MaxCrawlDelay %v, MaxInFlight %d, MaxHosts %d, RobotsTTL %v, RobotsTimeout %v, %v",
		c.baseDelay, c.jitter, c.maxDelay, c.maxCrawlDelay, c.maxInFlight, c.maxHosts, c.robotsTTL, c.robotsTimeout, c.failure)
}

// floor is the least gap between two consecutive starts to a host, the
// earlier with Crawl-delay a and the later with Crawl-delay b.
func (c propConfig) floor(a, b time.Duration) time.Duration {
	return max(c.baseDelay, min(max(a, b), c.maxCrawlDelay))
}

// What a robots.txt or a page answers.
type propAnswer int

const (
	ansOK       propAnswer = iota // 200 (robots.txt: the file)
	ansNotFound                   // 404
	ans429                        // 429, perhaps with Retry-After
	ans503                        // 503, perhaps with Retry-After
	ans5xx                        // 500 or 502, no Retry-After
	ansReset                      // an error wrapping syscall.ECONNRESET
	ansPanic                      // the base panics
	ansNothing                    // (nil, nil)
	ansBoth                       // a response and an error wrapping ECONNRESET
)

func (a propAnswer) String() string {
	return [...]string{"200", "404", "429", "503", "5xx", "reset", "panic", "(nil, nil)", "response+error"}[a]
}

// retryAfter is how a 429 or 503 says when to come back.
type retryAfter struct {
	form string // "", "seconds", "date", "date-no-Date", "rfc850" or "garbage"
	secs int    // seconds from now, for every form but "" and "garbage"
}

// header sets h's Retry-After, and Date for the forms that have it, for an
// answer at now, and returns the pause the transport must keep: the
// server's delay measured as RFC 9110 §10.2.3 says, capped at an hour; 0
// when there is none.
func (ra retryAfter) header(h http.Header, now time.Time) time.Duration {
	sec := now.Truncate(time.Second) // HTTP-dates have a one-second resolution
	at := sec.Add(time.Duration(ra.secs) * time.Second).UTC()
	var d time.Duration
	switch ra.form {
	case "":
		return 0
	case "garbage":
		h.Set("Retry-After", "soon")
		return 0
	case "seconds":
		h.Set("Retry-After", fmt.Sprint(ra.secs))
		d = time.Duration(ra.secs) * time.Second
	case "date":
		h.Set("Date", sec.UTC().Format(http.TimeFormat))
		h.Set("Retry-After", at.Format(http.TimeFormat))
		d = at.Sub(sec)
	case "date-no-Date": // measured against the transport's clock
		h.Set("Retry-After", at.Format(http.TimeFormat))
		d = at.Sub(now)
	case "rfc850":
		h.Set("Date", sec.UTC().Format(http.TimeFormat))
		h.Set("Retry-After", at.Format("Monday, 02-Jan-06 15:04:05 GMT"))
		d = at.Sub(sec)
	}
	return min(max(d, 0), pace.MaxPause)
}

func (ra retryAfter) String() string {
	if ra.form == "" || ra.form == "garbage" {
		return ra.form
	}
	return fmt.Sprintf("%s %ds", ra.form, ra.secs)
}

// propOrigin is one origin of a host, and what its robots.txt answers.
type propOrigin struct {
	scheme, host, port string // host canonical, port explicit
	profile            string // "good", "missing", "flaky" or "down"
	delays             []time.Duration
	rand               *rand.Rand // draws its robots.txt answers, one fetch after another; guarded by propBase.mu
}

func (o *propOrigin) String() string { return o.scheme + "://" + o.host + ":" + o.port }

// propRequest is one request of a sequence, drawn before it is sent.
type propRequest struct {
	id      int
	url     string
	origin  *propOrigin
	private bool // its path is one robots.txt disallows
	body    bool
	answer  propAnswer
	ra      retryAfter
	latency time.Duration
	cancel  time.Duration // > 0: the context is cancelled this long after the call
	early   bool          // the context is cancelled before the call
	opaque  bool          // the URL is sent as an Opaque "//host/path", as net/http writes it
	timeout time.Duration // > 0: the context has this deadline, from the call
	arrive  time.Duration // the wait before the call, after the previous request's call
}

func (r *propRequest) String() string {
	s := fmt.Sprintf("#%d %s answer %v", r.id, r.url, r.answer)
	if r.ra.form != "" {
		s += " Retry-After " + r.ra.String()
	}
	s += fmt.Sprintf(" after %v", r.latency)
	if r.opaque {
		s += " (opaque)"
	}
	if r.cancel > 0 {
		s += fmt.Sprintf(", cancelled at +%v", r.cancel)
	}
	if r.early {
		s += ", cancelled before the call"
	}
	if r.timeout > 0 {
		s += fmt.Sprintf(", deadline +%v", r.timeout)
	}
	return s
}

// propEvent is one request the base saw.
type propEvent struct {
	seq        int
	key        string // pacing key: the canonical host
	origin     string
	id         int // the request's id; -1 for a robots.txt fetch
	start, end time.Time
	ended      bool
	answer     string        // what the base answered
	pause      time.Duration // the Retry-After the transport must keep from end; 0 for none
	delay      time.Duration // robots.txt: the Crawl-delay the answer can bring in force, at least
}

func (e *propEvent) robots() bool { return e.id < 0 }

func (e *propEvent) String() string {
	what := fmt.Sprintf("#%d", e.id)
	if e.robots() {
		what = "robots.txt"
	}
	s := fmt.Sprintf("[%d] %s %s %s -> %s", e.seq, e.start.Format("15:04:05.000"), e.origin, what, e.answer)
	if e.ended {
		s += " at " + e.end.Format("15:04:05.000")
	}
	if e.pause > 0 {
		s += fmt.Sprintf(", pause %v", e.pause)
	}
	if e.robots() && e.ended {
		s += fmt.Sprintf(", Crawl-delay >= %v", e.delay)
	}
	return s
}

// propBase is the fake base transport: it answers each request as drawn,
// after its latency on the fake clock (cut short by the request's context,
// as a real transport's would be), and records what it saw.
type propBase struct {
	maxInFlight int
	origins     map[string]*propOrigin // by String()
	requests    []*propRequest

	mu         sync.Mutex // guards the fields below and every origin's rand
	events     []*propEvent
	byID       map[int]*propEvent
	inFlight   map[string]int
	robots     int             // robots.txt requests in the base now
	robotsPeak int             // the most at once
	violations []propFault     // what the base saw go wrong
	respBodies []*closeCounter // every response body made, with what made it
	respOf     []string
}

func newPropBase(maxInFlight int, origins []*propOrigin, requests []*propRequest) *propBase {
	b := &propBase{maxInFlight: maxInFlight, origins: map[string]*propOrigin{}, requests: requests,
		byID: map[int]*propEvent{}, inFlight: map[string]int{}}
	for _, o := range origins {
		b.origins[o.String()] = o
	}
	return b
}

func (b *propBase) RoundTrip(r *http.Request) (resp *http.Response, err error) {
	if r.Body != nil {
		defer r.Body.Close() // a RoundTripper closes the body on every path
	}
	key := strings.TrimSuffix(strings.ToLower(r.URL.Hostname()), ".")
	port := r.URL.Port()
	if port == "" {
		port = defaultPort(r.URL.Scheme)
	}
	ev := &propEvent{key: key, origin: r.URL.Scheme + "://" + key + ":" + port, id: -1, start: time.Now()}
	answer, ra, latency := ansOK, retryAfter{}, time.Duration(0)
	var crawlDelay time.Duration

	b.mu.Lock()
	ev.seq = len(b.events)
	b.events = append(b.events, ev)
	if r.URL.Path == "/robots.txt" {
		o := b.origins[ev.origin]
		if o == nil {
			b.violations = append(b.violations, propFault{key, ev.start, fmt.Sprintf("robots.txt of an unknown origin: %s", r.URL)})
			b.mu.Unlock()
			return nil, errors.New("unknown origin")
		}
		answer, ra, latency, crawlDelay = o.draw()
	} else {
		var id int
		fmt.Sscan(r.Header.Get("X-Prop-Id"), &id)
		req := b.requests[id]
		ev.id = id
		if b.byID[id] != nil {
			b.violations = append(b.violations, propFault{key, ev.start, fmt.Sprintf("#%d reached the base twice", id)})
		}
		b.byID[id] = ev
		answer, ra, latency = req.answer, req.ra, req.latency
	}
	if ev.robots() {
		b.robots++
		b.robotsPeak = max(b.robotsPeak, b.robots)
	}
	if b.inFlight[key]++; b.inFlight[key] > b.maxInFlight {
		b.violations = append(b.violations, propFault{key, ev.start, fmt.Sprintf("in flight: event %d made %d requests in the base, more than MaxInFlight %d",
			ev.seq, b.inFlight[key], b.maxInFlight)})
	}
	b.mu.Unlock()

	defer func() {
		b.mu.Lock()
		b.inFlight[key]--
		if ev.robots() {
			b.robots--
		}
		ev.end, ev.ended = time.Now(), true
		b.mu.Unlock()
	}()

	if err := sleepCtx(r.Context(), latency); err != nil {
		ev.answer = "context: " + err.Error()
		return nil, err
	}
	now := time.Now()
	reset := fmt.Errorf("read tcp: %w", syscall.ECONNRESET)
	respond := func(status int) *http.Response {
		body := "ok"
		ev.answer = fmt.Sprint(status)
		if ev.robots() && status == 200 {
			body = robotsBody(crawlDelay)
			ev.answer += fmt.Sprintf(" (Crawl-delay %v)", crawlDelay)
			ev.delay = crawlDelay
		}
		cc := newBody(body)
		b.mu.Lock()
		b.respBodies = append(b.respBodies, cc)
		b.respOf = append(b.respOf, ev.String())
		b.mu.Unlock()
		return &http.Response{StatusCode: status, Status: http.StatusText(status), Header: make(http.Header), Body: cc, Request: r}
	}
	// An unreachable robots.txt leaves ev.delay 0: the last good copy stays
	// in force, unless the cache dropped it meanwhile.
	switch answer {
	case ansOK:
		return respond(200), nil
	case ansNotFound:
		return respond(404), nil
	case ans429, ans503:
		status := 429
		if answer == ans503 {
			status = 503
		}
		resp := respond(status)
		ev.pause = ra.header(resp.Header, now)
		if ra.form != "" {
			ev.answer += " Retry-After: " + resp.Header.Get("Retry-After")
		}
		return resp, nil
	case ans5xx:
		return respond(500 + 2*(ev.seq%2)), nil
	case ansReset:
		ev.answer = answer.String()
		return nil, reset
	case ansPanic:
		ev.answer = answer.String()
		panic(propPanic{id: ev.id})
	case ansNothing:
		ev.answer = answer.String()
		return nil, nil
	default: // ansBoth
		resp := respond(200)
		ev.answer = answer.String()
		return resp, reset
	}
}

// propPanic is what the base panics with.
type propPanic struct{ id int }

// robotsBody is a robots.txt that gives PropBot the Crawl-delay d and
// disallows /private/ to everyone.
func robotsBody(d time.Duration) string {
	return fmt.Sprintf("User-agent: otherbot\nCrawl-delay: 9999\nDisallow: /\n\nUser-agent: *\nCrawl-delay: 9999\nDisallow: /private/\n\n"+
		"User-agent: propbot\nCrawl-delay: %v\nDisallow: /private/\n", d.Seconds())
}

// draw returns the answer to o's next robots.txt fetch. The caller holds
// propBase.mu.
func (o *propOrigin) draw() (a propAnswer, ra retryAfter, latency time.Duration, crawlDelay time.Duration) {
	r := o.rand
	crawlDelay = o.delays[r.IntN(len(o.delays))]
	latency = []time.Duration{0, 0, 10 * time.Millisecond, 400 * time.Millisecond, 3 * time.Second, 15 * time.Second}[r.IntN(6)]
	switch o.profile {
	case "good": // and within any robots.txt timeout
		a, latency = ansOK, min(latency, 400*time.Millisecond)
	case "missing":
		a = ansNotFound
	case "flaky":
		a = []propAnswer{ansOK, ansOK, ansNotFound, ans429, ans503, ans5xx, ansReset, ansPanic, ansNothing}[r.IntN(9)]
	default: // "down"
		a = []propAnswer{ans429, ans503, ans503, ansReset}[r.IntN(4)]
	}
	if a == ans429 || a == ans503 {
		ra = drawRetryAfter(r)
	}
	return a, ra, latency, crawlDelay
}

func drawRetryAfter(r *rand.Rand) retryAfter {
	ra := retryAfter{form: []string{"", "", "seconds", "seconds", "date", "date-no-Date", "rfc850", "garbage"}[r.IntN(8)]}
	ra.secs = []int{1, 5, 30, 120, -10}[r.IntN(5)]
	if r.IntN(20) == 0 {
		ra.secs = 7200 // over the cap
	}
	if ra.form == "seconds" && ra.secs < 0 {
		ra.secs = 0
	}
	return ra
}

// sleepCtx waits d on the fake clock, or until ctx ends, as a real
// transport waits for a server.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// propResult is what one RoundTrip returned.
type propResult struct {
	called, returned time.Time
	resp             *http.Response
	err              error
	panicked         any
	body             *closeCounter // nil when the request had none
	over             atomic.Bool   // RoundTrip has returned or panicked
}

// drawSequence draws a seed's configuration, origins and requests.
func drawSequence(r *rand.Rand) (propConfig, []*propOrigin, []*propRequest) {
	pick := func(ds ...time.Duration) time.Duration { return ds[r.IntN(len(ds))] }
	const ms = time.Millisecond
	cfg := propConfig{
		baseDelay:     pick(0, 50*ms, 200*ms, time.Second),
		jitter:        []float64{0, 0.5, 1}[r.IntN(3)],
		maxDelay:      pick(500*ms, time.Minute),
		maxCrawlDelay: pick(0, 2*time.Second, 10*time.Second, time.Minute),
		maxInFlight:   1 + r.IntN(3),
		maxHosts:      1 + r.IntN(4),
		robotsTTL:     pick(24*time.Hour, time.Minute, 5*time.Second),
		robotsTimeout: pick(10*time.Second, 2*time.Second),
		failure:       FailOpen,
	}
	if r.IntN(4) == 0 {
		cfg.failure = FailClosed
	}

	var origins []*propOrigin
	hosts := 6 + r.IntN(15)
	for h := range hosts {
		host := fmt.Sprintf("h%d.example", h)
		all := []struct{ scheme, port string }{{"http", "80"}, {"https", "443"}, {"http", "8080"}, {"https", "8443"}}
		r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		for _, sp := range all[:1+r.IntN(3)] {
			o := &propOrigin{scheme: sp.scheme, host: host, port: sp.port,
				profile: []string{"good", "good", "missing", "flaky", "down"}[r.IntN(5)],
				rand:    rand.New(rand.NewPCG(r.Uint64(), r.Uint64()))}
			for range 1 + r.IntN(2) { // two: the file changes between fetches
				o.delays = append(o.delays, pick(0, 500*ms, 2*time.Second, 3*time.Second, 2*time.Hour))
			}
			origins = append(origins, o)
		}
	}

	n := 40 + r.IntN(100)
	requests := make([]*propRequest, n)
	for i := range requests {
		o := origins[r.IntN(len(origins))]
		rq := &propRequest{id: i, origin: o, private: r.IntN(7) == 0, body: r.IntN(2) == 0}
		host := o.host
		switch r.IntN(4) { // spellings of one server
		case 0:
			host = strings.ToUpper(host[:1]) + host[1:]
		case 1:
			host += "."
		}
		if o.port != defaultPort(o.scheme) || r.IntN(4) == 0 {
			host += ":" + o.port
		}
		path := fmt.Sprintf("/p/%d", i)
		if rq.private {
			path = fmt.Sprintf("/private/%d", i)
		}
		rq.url = o.scheme + "://" + host + path
		rq.answer = []propAnswer{ansOK, ansOK, ansOK, ansOK, ansNotFound, ans429, ans429, ans503, ans5xx,
			ansReset, ansPanic, ansNothing, ansBoth}[r.IntN(13)]
		if rq.answer == ans429 || rq.answer == ans503 {
			rq.ra = drawRetryAfter(r)
		}
		rq.latency = pick(0, 0, 5*ms, 200*ms, time.Second, 4*time.Second, 20*time.Second)
		switch r.IntN(6) {
		case 0, 1:
			rq.timeout = pick(100*ms, time.Second, 5*time.Second, 30*time.Second, 2*time.Minute)
		case 2:
			rq.cancel = pick(1*ms, 300*ms, 3*time.Second, 20*time.Second)
		}
		rq.early = r.IntN(20) == 0
		rq.opaque = r.IntN(5) == 0
		rq.arrive = pick(0, 0, 10*ms, 100*ms, time.Second, 5*time.Second, 30*time.Second)
		requests[i] = rq
	}
	if r.IntN(3) == 0 {
		origins, requests = drawPausedBurst(r, origins, requests)
	}
	return cfg, origins, requests
}

// drawPausedBurst adds a host to origins, and to requests, at a random
// place, one request that pauses it for an hour and, 10 s later, a burst
// of requests with 50 ms deadlines to as many other origins of it. It
// returns both, the requests numbered anew.
func drawPausedBurst(r *rand.Rand, origins []*propOrigin, requests []*propRequest) ([]*propOrigin, []*propRequest) {
	const host = "paused.example"
	n := 60 + r.IntN(100)
	var burst []*propRequest
	for i := range n + 1 {
		o := &propOrigin{scheme: "http", host: host, port: fmt.Sprint(20000 + i), profile: "good",
			delays: []time.Duration{0}, rand: rand.New(rand.NewPCG(r.Uint64(), r.Uint64()))}
		origins = append(origins, o)
		rq := &propRequest{origin: o, url: fmt.Sprintf("http://%s:%s/p/%d", host, o.port, i), answer: ansOK,
			timeout: 50 * time.Millisecond, opaque: r.IntN(5) == 0, arrive: []time.Duration{0, 0, time.Millisecond, 10 * time.Millisecond}[r.IntN(4)]}
		if i == 0 {
			rq.answer, rq.ra, rq.timeout, rq.opaque = ans429, retryAfter{form: "seconds", secs: 3600}, 0, false
		}
		if i == 1 {
			rq.arrive = 10 * time.Second
		}
		burst = append(burst, rq)
	}
	at := r.IntN(len(requests) + 1)
	requests = slices.Concat(requests[:at], burst, requests[at:])
	for i, rq := range requests {
		rq.id = i
	}
	return origins, requests
}

// checkTransportSequence runs the traffic seed draws through a transport and
// checks the invariants of TestTransportProperties. Times are instants of
// the bubble's fake clock, read by the base when a request reaches it (its
// start) and when it answers (its end).
//
// The floor of a gap. Let a and b be consecutive starts to one host, in the
// order the base saw them, and cd(x) the Crawl-delay the transport held for
// x: the Crawl-delay that the robots.txt in force for x's origin gives
// PropBot, or 0 for a robots.txt fetch itself and for an origin whose file
// is missing (4xx) or unreachable with no good copy. Then
//
//	b.start − a.start >= max(BaseDelay, min(max(cd(a), cd(b)), MaxCrawlDelay))
//
// that is, the gap after a request is at least its own Crawl-delay, so a
// robots.txt fetch of a known host waits the Crawl-delay of the host's last
// request, and a request waits its own Crawl-delay after the last start,
// robots.txt fetches included, so the first page after a fetch waits the
// Crawl-delay the fetch brought in force; a sweep of the host table may not
// shorten either (TestSweepKeepsCrawlDelay checks the second alone).
// When robots.txt changes, each side of a gap has the Crawl-delay its own
// request saw. The base does not
// know which file the transport consulted for a page, so cd(page) is
// bounded below by the least Crawl-delay of the files that can have been in
// force for its origin between the call of RoundTrip and the start: the one
// in force before the call and every file fetched until the start. A file
// that answered 2xx gives its group's Crawl-delay; 4xx gives 0; an
// unreachable answer keeps the last good copy in force, unless the cache
// dropped it (invisible from the base), so it counts as 0.
//
// Retry-After. When the base answers a request to a host, page or robots.txt
// fetch, at end with a 429 or 503 whose Retry-After gives the pause d
// (measured against the response's Date, or the clock at end without one,
// capped at an hour), no request to the host starts in (end, end+d). One
// that starts at end itself may have been admitted before the answer was
// observed, at the same instant.
func checkTransportSequence(t *testing.T, seed uint64) {
	cfg, origins, requests := drawSequence(rand.New(rand.NewPCG(seed, 0x9309)))
	base := newPropBase(cfg.maxInFlight, origins, requests)
	tr := New(base, cfg.options()...)

	results := make([]propResult, len(requests))
	stop, stopAll := context.WithCancel(context.Background())
	defer stopAll()
	var wg sync.WaitGroup
	var bounds boundsCheck
	bounds.start(cfg)
	for _, rq := range requests {
		time.Sleep(rq.arrive)
		res := &results[rq.id]
		wg.Go(func() { send(stop, tr, rq, res) })
		synctest.Wait()
		bounds.check(t, tr, base, results[:rq.id+1])
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	// Every request ends: it waits behind at most the others and their
	// robots.txt fetches, a few hundred, each of which waits at most an
	// hour of Retry-After, a backoff pause of 20 minutes with its jitter and
	// twice MaxDelay or MaxCrawlDelay. Requests still waiting 30 days after
	// the last arrival are stuck: they are stopped, and reported.
	var stuck []int
	select {
	case <-done:
	case <-time.After(30 * 24 * time.Hour):
		for i := range results {
			if !results[i].over.Load() {
				stuck = append(stuck, i)
			}
		}
		stopAll()
		<-done
	}
	// Fetches that callers stopped waiting for go on; let them end.
	time.Sleep(3 * time.Hour)
	synctest.Wait()

	base.mu.Lock()
	defer base.mu.Unlock()
	var faults []propFault
	fault := func(key string, at time.Time, format string, args ...any) {
		faults = append(faults, propFault{key: key, at: at, msg: fmt.Sprintf(format, args...)})
	}
	faults = append(faults, base.violations...)
	faults = append(faults, bounds.faults...)
	for _, e := range base.events {
		if !e.ended {
			fault(e.key, e.start, "event %d never ended", e.seq)
		}
	}

	// Files in force, by origin, in the order their fetches ended.
	files := map[string][]*propEvent{}
	for _, e := range base.events {
		if e.robots() {
			files[e.origin] = append(files[e.origin], e)
		}
	}
	for _, fs := range files {
		slices.SortStableFunc(fs, func(a, b *propEvent) int { return a.end.Compare(b.end) })
	}
	// crawlDelay is cd(e), bounded below as the comment above says.
	crawlDelay := func(e *propEvent) time.Duration {
		if e.robots() {
			return 0
		}
		called := results[e.id].called
		fs := files[e.origin]
		least, seen := time.Duration(0), false
		for i, f := range fs {
			inForceAtCall := f.end.Before(called) && (i+1 == len(fs) || !fs[i+1].end.Before(called))
			fetchedSince := !f.end.Before(called) && !f.end.After(e.start)
			if inForceAtCall || fetchedSince {
				if !seen || f.delay < least {
					least = f.delay
				}
				seen = true
			}
		}
		if !seen {
			fault(e.key, e.start, "#%d started with no robots.txt fetched for %s", e.id, e.origin)
		}
		return least
	}

	byKey := map[string][]*propEvent{}
	for _, e := range base.events {
		byKey[e.key] = append(byKey[e.key], e)
	}
	for key, evs := range byKey {
		slices.SortStableFunc(evs, func(a, b *propEvent) int {
			if c := a.start.Compare(b.start); c != 0 {
				return c
			}
			return a.seq - b.seq
		})
		for i := 1; i < len(evs); i++ {
			a, b := evs[i-1], evs[i]
			cdA, cdB := crawlDelay(a), crawlDelay(b)
			gap, floor := b.start.Sub(a.start), cfg.floor(cdA, cdB)
			if gap < floor {
				fault(key, b.start, "gap: event %d started %v after event %d; want >= %v (Crawl-delays %v and %v)",
					b.seq, gap, a.seq, floor, cdA, cdB)
			}
		}
		for _, p := range evs {
			if p.pause == 0 {
				continue
			}
			until := p.end.Add(p.pause)
			for _, s := range evs {
				if s.start.After(p.end) && s.start.Before(until) {
					fault(key, s.start, "Retry-After: event %d started at %v, before %v, the end of the pause event %d answered at %v",
						s.seq, s.start.Format("15:04:05.000"), until.Format("15:04:05.000"), p.seq, p.end.Format("15:04:05.000"))
				}
			}
		}
	}

	for _, i := range stuck {
		rq := requests[i]
		var stats HostStats
		for _, h := range statsOf(t, tr) {
			if h.Key == rq.origin.host {
				stats = h
			}
		}
		fault(rq.origin.host, results[i].called, "liveness: %v still waited 30 days after the last request came; the host has %d in flight, %d waiting, blocked until %v",
			rq, stats.InFlight, stats.Waiting, stats.PausedUntil.Format(time.DateTime))
	}
	for _, rq := range requests {
		res := &results[rq.id]
		e := base.byID[rq.id]
		key := rq.origin.host
		at := res.called
		switch {
		case slices.Contains(stuck, rq.id):
		case res.panicked != nil:
			if e == nil || e.answer != ansPanic.String() || res.panicked != (propPanic{id: rq.id}) {
				fault(key, at, "results: %v panicked with %v; the base did not panic for it", rq, res.panicked)
			}
		case res.resp != nil && res.err != nil:
			fault(key, at, "results: %v returned a response and the error %v", rq, res.err)
		case res.resp == nil && res.err == nil:
			fault(key, at, "results: %v returned neither a response nor an error", rq)
		case e != nil && e.answer == ansPanic.String():
			fault(key, at, "results: the base panicked for %v, and RoundTrip returned %v, %v", rq, res.resp, res.err)
		case res.err != nil:
			if msg := checkError(rq, e, res, cfg); msg != "" {
				fault(key, at, "results: %v: %s", rq, msg)
			}
		case e == nil:
			fault(key, at, "results: %v returned a response the base never made", rq)
		case fmt.Sprint(res.resp.StatusCode) != e.answer[:3]:
			fault(key, at, "results: %v returned status %d; the base answered %s", rq, res.resp.StatusCode, e.answer)
		}
		if e != nil && rq.private && rq.origin.profile == "good" {
			fault(key, at, "robots.txt: %v reached the base, though every robots.txt of its origin disallows it", rq)
		}
		if res.body != nil {
			if n := res.body.closes.Load(); n != 1 {
				fault(key, at, "bodies: the body of %v was closed %d times; want once (returned %v, %v, panic %v)",
					rq, n, res.resp, res.err, res.panicked)
			}
		}
	}
	for i, cc := range base.respBodies {
		if n := cc.closes.Load(); n != 1 {
			fault("", time.Time{}, "bodies: the response body of %s was closed %d times; want once", base.respOf[i], n)
		}
	}

	for _, h := range statsOf(t, tr) {
		if h.InFlight != 0 || h.Waiting != 0 {
			fault(h.Key, time.Time{}, "at the end: %d in flight and %d waiting; want none", h.InFlight, h.Waiting)
		}
	}
	robots, refused := 0, 0
	for _, e := range base.events {
		if e.robots() {
			robots++
		}
	}
	for i := range results {
		if errors.Is(results[i].err, ErrRobotsBlocked) {
			refused++
		}
	}
	t.Logf("%v; %d requests to %d hosts: %d reached the base, %d were refused; %d robots.txt fetches",
		cfg, len(requests), len(byKey), len(base.byID), refused, robots)
	if len(faults) > 0 {
		report(t, seed, cfg, requests, byKey, faults)
	}
}

// boundsCheck checks, at each arrival of a request, once every goroutine
// of the bubble is blocked, that the robots.txt fetches, the robots cache
// and the goroutines stay within their bounds. A fetch runs only while a
// request waits for it or the base holds its request, so that
//
//	fetches <= requests under way + robots.txt requests in the base
//
// and the cache, which evicts when it holds MaxOrigins or twice what an
// eviction left, holds at most twice the larger of MaxOrigins and the
// most fetches that ran at once, plus a request under way each, which may
// insert one after an eviction. The goroutines are the bubble's first
// ones, one per request under way and per fetch, and one per robots.txt
// request in the base, which it may hold after its fetch gave up on it.
type boundsCheck struct {
	maxOrigins int
	goroutines int // the bubble's before the first request
	peak       int // the most requests under way at an arrival
	faults     []propFault
}

func (b *boundsCheck) start(cfg propConfig) {
	b.maxOrigins, b.goroutines = cfg.maxHosts, bubbleGoroutines()
}

// check checks the bounds, results being those of the requests called.
func (b *boundsCheck) check(t *testing.T, tr *PoliteTransport, base *propBase, results []propResult) {
	live := 0
	for i := range results {
		if !results[i].over.Load() {
			live++
		}
	}
	b.peak = max(b.peak, live)
	base.mu.Lock()
	inBase, inBasePeak := base.robots, base.robotsPeak
	base.mu.Unlock()
	fetches, entries := int(tr.robots.running.Load()), cached(t, tr.robots)
	goroutines := bubbleGoroutines() - b.goroutines
	fault := func(format string, args ...any) {
		b.faults = append(b.faults, propFault{at: time.Now(), msg: fmt.Sprintf("bounds, at request %d: ", len(results)-1) + fmt.Sprintf(format, args...)})
	}
	if fetches > live+inBase {
		fault("%d robots.txt fetches run, with %d requests under way and %d robots.txt requests in the base", fetches, live, inBase)
	}
	if most := 2*max(b.maxOrigins, b.peak+inBasePeak) + live; entries > most {
		fault("the robots cache holds %d origins; want at most %d", entries, most)
	}
	if most := live + fetches + inBase; goroutines > most {
		fault("%d goroutines more than at the start; want at most %d", goroutines, most)
	}
}

// bubbleGoroutines counts the goroutines of the synctest bubble that runs,
// from their stacks, as net/http's tests find theirs: the process has
// others, which come and go.
func bubbleGoroutines() int {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return bytes.Count(buf[:n], []byte(", synctest bubble "))
		}
		buf = make([]byte, 2*len(buf))
	}
}

// send sends rq through tr on a context derived from ctx, as a caller does: it recovers a panic, as
// http.Server would, and closes the response body.
func send(ctx context.Context, tr *PoliteTransport, rq *propRequest, res *propResult) {
	if rq.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, rq.timeout)
		defer cancel()
	}
	if rq.cancel > 0 {
		c, cancel := context.WithCancel(ctx)
		stop := time.AfterFunc(rq.cancel, cancel)
		defer stop.Stop()
		defer cancel()
		ctx = c
	}
	if rq.early {
		c, cancel := context.WithCancel(ctx)
		cancel()
		ctx = c
	}
	method := "GET"
	if rq.body {
		method = "POST"
		res.body = newBody("payload")
	}
	req, err := http.NewRequestWithContext(ctx, method, rq.url, nil)
	if err != nil {
		panic(err)
	}
	if u := req.URL; rq.opaque {
		req.URL = &url.URL{Scheme: u.Scheme, Host: u.Host, Opaque: "//" + u.Host + u.EscapedPath()}
	}
	if res.body != nil {
		req.Body = res.body
	}
	req.Header.Set("X-Prop-Id", fmt.Sprint(rq.id))

	defer func() {
		res.returned = time.Now()
		res.panicked = recover()
		res.over.Store(true)
	}()
	res.called = time.Now()
	res.resp, res.err = tr.RoundTrip(req)
	if res.resp != nil && res.resp.Body != nil {
		res.resp.Body.Close()
	}
}

// checkError returns what is wrong with the error rq got, or "". e is what
// the base saw of rq, nil if nothing.
func checkError(rq *propRequest, e *propEvent, res *propResult, cfg propConfig) string {
	err := res.err
	if rq.early && (e != nil || !errors.Is(err, context.Canceled)) {
		return fmt.Sprintf("cancelled before the call, it got %v, and reached the base: %v", err, e != nil)
	}
	if e != nil { // the error is the base's, as it returned it
		switch {
		case e.answer == ansReset.String() || e.answer == ansBoth.String():
			if !errors.Is(err, syscall.ECONNRESET) {
				return fmt.Sprintf("got %v; want the base's reset", err)
			}
		case e.answer == ansNothing.String():
			if !strings.Contains(err.Error(), "no response and no error") {
				return fmt.Sprintf("got %v; want an error naming the base's (nil, nil)", err)
			}
		case strings.HasPrefix(e.answer, "context: "):
			if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
				return fmt.Sprintf("got %v; want the context's error", err)
			}
		default:
			return fmt.Sprintf("got %v; the base answered %s", err, e.answer)
		}
		return ""
	}
	var de *pace.DeadlineError
	switch {
	case errors.Is(err, ErrRobotsBlocked):
		if !rq.private && cfg.failure != FailClosed {
			return fmt.Sprintf("refused by robots.txt: %v", err)
		}
	case errors.As(err, &de):
		if rq.timeout == 0 || !errors.Is(err, context.DeadlineExceeded) || de.Earliest.Before(de.Deadline) || res.returned.After(de.Deadline) {
			return fmt.Sprintf("%v returned at %v", err, res.returned.Format("15:04:05.000"))
		}
	case errors.Is(err, context.Canceled):
		if rq.cancel == 0 && !rq.early {
			return fmt.Sprintf("got %v, and nothing cancelled it", err)
		}
	case errors.Is(err, context.DeadlineExceeded):
		if rq.timeout == 0 {
			return fmt.Sprintf("got %v, and it had no deadline", err)
		}
	default:
		return fmt.Sprintf("unexpected error %v", err)
	}
	return ""
}

// propFault is one broken invariant.
type propFault struct {
	key string // the host at fault, or ""
	at  time.Time
	msg string
}

// report fails t with seed's faults, its configuration, and, for each host
// at fault, its requests and what the base saw of it.
func report(t *testing.T, seed uint64, cfg propConfig, requests []*propRequest, byKey map[string][]*propEvent, faults []propFault) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d: %d invariants broken\nconfig: %v\n", seed, len(faults), cfg)
	const most = 10
	keys := map[string]bool{}
	for i, f := range faults {
		if i == most {
			fmt.Fprintf(&b, "... and %d more\n", len(faults)-most)
			break
		}
		at := ""
		if !f.at.IsZero() {
			at = " (" + f.at.Format("15:04:05.000") + ")"
		}
		fmt.Fprintf(&b, "%s%s: %s\n", f.key, at, f.msg)
		if f.key != "" {
			keys[f.key] = true
		}
	}
	for _, key := range slices.Sorted(maps.Keys(keys)) {
		fmt.Fprintf(&b, "\nhost %s, requests:\n", key)
		for _, rq := range requests {
			if rq.origin.host == key {
				fmt.Fprintf(&b, "  %v\n", rq)
			}
		}
		fmt.Fprintf(&b, "what the base saw:\n")
		for _, e := range byKey[key] {
			fmt.Fprintf(&b, "  %v\n", e)
		}
	}
	t.Error(b.String())
}

// TestSweepKeepsCrawlDelay checks that a sweep of the host table never lets
// a request start sooner after the host's last start than the Crawl-delay
// it carries, as the pacing formula of the package documentation asks.
func TestSweepKeepsCrawlDelay(t *testing.T) {
	tests := []struct {
		name  string
		first []string // requests before the sweep: the last start to h carries no Crawl-delay
		check bool     // the first request is only checked: robots.txt is fetched, no page follows
		then  string   // its robots.txt asks for 5s
		after string   // the start it must keep 5s from
	}{
		{"a robots.txt fetch no page waited for", []string{"http://h/a"}, true, "http://h/a", "http://h/robots.txt"},
		{"another origin with a smaller Crawl-delay", []string{"https://h/x", "http://h/y"}, false, "https://h/z", "http://h/y"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := &fakeBase{fn: func(r *http.Request) (*http.Response, error) {
					switch {
					case r.URL.Path != "/robots.txt":
						return respond(r, 200, "ok"), nil
					case r.URL.Host == "h" && (r.URL.Scheme == "https" || tt.check):
						return respond(r, 200, "User-agent: *\nCrawl-delay: 5\n"), nil
					}
					return respond(r, 404, ""), nil
				}}
				tr := New(base, WithPacing(pace.Policy{Jitter: pace.None, BaseDelay: 100 * time.Millisecond}), WithLimits(Limits{MaxKeys: 2, MaxOrigins: 2}))
				for _, u := range tt.first {
					if tt.check {
						req, _ := http.NewRequest("GET", u, nil)
						if _, err := tr.Check(req); err != nil {
							t.Fatal(err)
						}
						continue
					}
					resp, err := get(tr, u, "")
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
				}
				time.Sleep(200 * time.Millisecond)
				// Requests for /robots.txt itself go to the host table
				// alone: two new hosts fill it, and it sweeps.
				for _, u := range []string{"http://other1/robots.txt", "http://other2/robots.txt", tt.then} {
					resp, err := get(tr, u, "")
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
				}
				starts := map[string]time.Time{}
				for _, h := range base.hitList() {
					starts[h.url] = h.at
				}
				if gap := starts[tt.then].Sub(starts[tt.after]); gap < 5*time.Second {
					t.Errorf("%s started %v after %s; want at least its Crawl-delay, 5s", tt.then, gap, tt.after)
				}
			})
		})
	}
}
