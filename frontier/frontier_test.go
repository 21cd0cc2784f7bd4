package frontier_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/frontier"
	"github.com/polite-go/polite/pace"
)

// TestPausedHostTakesNoWorker crawls three chains of pages, host a paused
// for 30 s by a 429 with Retry-After on its front page: no page ever waits
// in the transport, robots.txt fetches included, however many workers;
// the other hosts are crawled while a is paused; a's front page is handed
// out again, first of its host, once the pause is over.
func TestPausedHostTakesNoWorker(t *testing.T) {
	for _, workers := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				web := &fakeWeb{links: map[string][]string{}, pause: map[string]int{"a": 30}}
				for _, h := range []string{"a", "b", "c"} {
					chain(web.links, h, 5)
				}
				tr := polite.New(web, pacing)
				f := frontier.New(tr, frontier.Options{Seen: new(frontier.SeenSet).Seen})
				mustAdd(t, f, "http://a/", "http://b/", "http://c/")
				c := newCrawler(f, tr)
				t0 := time.Now()
				c.run(context.Background(), workers)

				if len(c.errs) > 0 {
					t.Fatalf("Next failed: %v", c.errs)
				}
				pages := web.pages()
				if got, want := len(pages), 3*6+1; got != want {
					t.Errorf("%d pages requested; want %d", got, want)
				}
				if w := waitedInTransport(c.handed(), pages); len(w) > 0 {
					t.Errorf("pages waited in the transport: %v", w)
				}
				var retry, lastOther time.Time
				var aSeen int
				for _, p := range pages {
					switch hostOf(p.url) {
					case "a":
						aSeen++
						if aSeen == 2 {
							retry = p.at
							if p.url != "http://a/" {
								t.Errorf("a's page after the pause is %s; want http://a/, requeued at the head", p.url)
							}
						}
					default:
						lastOther = p.at
					}
				}
				if got := retry.Sub(t0); got < 30*time.Second {
					t.Errorf("a's front page tried again at +%v; want no sooner than the Retry-After, 30s", got)
				}
				if !lastOther.Before(retry) {
					t.Errorf("b and c done at +%v, a tried again at +%v; want b and c crawled during the pause",
						lastOther.Sub(t0), retry.Sub(t0))
				}
			})
		})
	}
}

// TestRefusalsTakeNoTurn checks that URLs robots.txt refuses are reported
// and dropped before they are handed out, and never requested; in report
// mode they are handed out, for the transport to send. (The conformance
// suite, politetest.RunQueue, checks the first for every Queue.)
func TestRefusalsTakeNoTurn(t *testing.T) {
	tests := []struct {
		name        string
		mode        polite.RobotsMode
		wantHanded  []string
		wantRefused []string
	}{
		{"enforce", polite.RobotsEnforce, []string{"http://a/x", "http://a/y"}, []string{"http://a/private/1", "http://a/private/2"}},
		{"report", polite.RobotsReport, []string{"http://a/private/1", "http://a/x", "http://a/private/2", "http://a/y"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				web := &fakeWeb{robots: map[string]string{"a": "User-agent: *\nDisallow: /private/\n"}}
				tr := polite.New(web, pacing, polite.WithRobotsMode(tt.mode))
				var mu sync.Mutex
				var refused []string
				var f *frontier.Frontier
				f = frontier.New(tr, frontier.Options{Refused: func(u string, d polite.Decision) {
					f.Len() // the hook runs outside the frontier's lock
					mu.Lock()
					defer mu.Unlock()
					refused = append(refused, u)
					if d.Rule != "Disallow: /private/" {
						t.Errorf("%s refused by %q; want Disallow: /private/", u, d.Rule)
					}
				}})
				mustAdd(t, f, "http://a/private/1", "http://a/x", "http://a/private/2", "http://a/y")
				c := newCrawler(f, tr)
				c.run(context.Background(), 1)

				var handed []string
				for _, h := range c.handed() {
					handed = append(handed, h.url)
				}
				if !slices.Equal(handed, tt.wantHanded) {
					t.Errorf("handed out %q; want %q", handed, tt.wantHanded)
				}
				if !slices.Equal(refused, tt.wantRefused) {
					t.Errorf("refused %q; want %q", refused, tt.wantRefused)
				}
				for _, p := range web.pages() {
					if strings.Contains(p.url, "/private/") && tt.mode == polite.RobotsEnforce {
						t.Errorf("%s was requested", p.url)
					}
				}
				if w := waitedInTransport(c.handed(), web.pages()); len(w) > 0 {
					t.Errorf("pages waited in the transport: %v", w)
				}
			})
		})
	}
}

// TestSeen checks the Seen hook: without one every URL is queued; with one
// a URL it reports seen is not; its error is Add's, and the URL is not
// queued; it runs outside the frontier's lock; Requeue does not ask it.
func TestSeen(t *testing.T) {
	errStore := errors.New("store down")
	tests := []struct {
		name      string
		seen      func(f **frontier.Frontier, calls *int) func(context.Context, string) (bool, error)
		wantLen   int
		wantErr   error
		wantCalls int
	}{
		{"none", nil, 3, nil, 0},
		{"SeenSet", func(_ **frontier.Frontier, calls *int) func(context.Context, string) (bool, error) {
			var s frontier.SeenSet
			return func(ctx context.Context, u string) (bool, error) {
				*calls++
				return s.Seen(ctx, u)
			}
		}, 2, nil, 3},
		{"failing", func(_ **frontier.Frontier, calls *int) func(context.Context, string) (bool, error) {
			return func(context.Context, string) (bool, error) {
				*calls++
				return false, errStore
			}
		}, 0, errStore, 3},
		{"outside the lock", func(f **frontier.Frontier, calls *int) func(context.Context, string) (bool, error) {
			var s frontier.SeenSet
			return func(ctx context.Context, u string) (bool, error) {
				*calls++
				(*f).Len() // deadlocks if called under the frontier's lock
				return s.Seen(ctx, u)
			}
		}, 2, nil, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var f *frontier.Frontier
				calls := 0
				var opts frontier.Options
				if tt.seen != nil {
					opts.Seen = tt.seen(&f, &calls)
				}
				f = frontier.New(polite.New(&fakeWeb{}, pacing), opts)
				for _, u := range []string{"http://a/1", "http://a/2", "http://a/1"} {
					if _, err := f.Add(context.Background(), u); !errors.Is(err, tt.wantErr) {
						t.Errorf("Add(%s) = %v; want %v", u, err, tt.wantErr)
					}
				}
				if got := f.Len(); got != tt.wantLen {
					t.Errorf("Len() = %d; want %d", got, tt.wantLen)
				}
				if tt.wantLen > 0 {
					turn, _ := f.Next(context.Background())
					turn.Requeue()
				}
				if calls != tt.wantCalls {
					t.Errorf("the hook was called %d times; want %d", calls, tt.wantCalls)
				}
			})
		})
	}
}

// sharedPacer stands for a Pacer that a fleet shares: an in-memory Pacer
// that two transports use, seen only through the exported interfaces.
type sharedPacer struct{ p pace.Pacer }

func (s sharedPacer) Acquire(ctx context.Context, r pace.Request) (pace.Lease, error) {
	return s.p.Acquire(ctx, r)
}

func (s sharedPacer) Release(l pace.Lease, o pace.Outcome) pace.Change { return s.p.Release(l, o) }

func (s sharedPacer) RobotsRead(l pace.Lease, crawlDelay time.Duration) {
	s.p.RobotsRead(l, crawlDelay)
}

// readySharedPacer is a sharedPacer that is a ReadyPacer too.
type readySharedPacer struct{ sharedPacer }

func (s readySharedPacer) Ready(ctx context.Context, r pace.Request) (pace.KeyState, error) {
	return s.p.(pace.ReadyPacer).Ready(ctx, r)
}

// TestSharedPacer crawls host a through transport B while another
// goroutine sends requests to a through transport A, over one shared
// Pacer: the starts to a keep the pace whoever sends them, and, when the
// Pacer is a ReadyPacer, the frontier's pages never wait in B.
func TestSharedPacer(t *testing.T) {
	for _, ready := range []bool{true, false} {
		t.Run(fmt.Sprintf("ReadyPacer %v", ready), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mp, err := pace.NewMemory(pace.Config{Policy: pace.Policy{BaseDelay: time.Second, Jitter: pace.None}})
				if err != nil {
					t.Fatal(err)
				}
				var shared pace.Pacer = sharedPacer{mp}
				if ready {
					shared = readySharedPacer{sharedPacer{mp}}
				}
				withShared := polite.WithPacer(func(pace.Config) pace.Pacer { return shared })
				web := &fakeWeb{links: map[string][]string{}}
				chain(web.links, "a", 5)
				a := polite.New(web, pacing, withShared)
				b := polite.New(web, pacing, withShared)

				var other sync.WaitGroup
				other.Go(func() {
					client := &http.Client{Transport: a}
					for i := range 4 {
						resp, err := client.Get(fmt.Sprintf("http://a/other/%d", i))
						if err != nil {
							t.Error(err)
							return
						}
						resp.Body.Close()
						time.Sleep(1500 * time.Millisecond)
					}
				})
				f := frontier.New(b, frontier.Options{})
				mustAdd(t, f, "http://a/")
				c := newCrawler(f, b)
				c.run(context.Background(), 2)
				other.Wait()

				starts := web.log()
				for i := 1; i < len(starts); i++ {
					if gap := starts[i].at.Sub(starts[i-1].at); gap < time.Second {
						t.Errorf("%s started %v after %s; want the shared pace, 1s", starts[i].url, gap, starts[i-1].url)
					}
				}
				var mine []start
				for _, p := range web.pages() {
					if !strings.Contains(p.url, "/other/") {
						mine = append(mine, p)
					}
				}
				if len(mine) != 6 {
					t.Errorf("%d of the frontier's pages requested; want 6", len(mine))
				}
				if w := waitedInTransport(c.handed(), mine); ready && len(w) > 0 {
					t.Errorf("pages waited in the transport: %v", w)
				}
			})
		})
	}
}

// TestRobotsPrefetch checks how a host whose robots.txt is not known gets
// it: fetched ahead on the frontier's own goroutines, at most
// RobotsPrefetch at once, so that no page waits for it in the transport;
// or, with prefetching off, by the request of the host's first URL, which
// waits in the transport.
func TestRobotsPrefetch(t *testing.T) {
	tests := []struct {
		name       string
		prefetch   int
		wantWaited []string // pages that waited in the transport
		wantAtOnce int      // the most robots.txt fetches in flight together
	}{
		{"default", 0, nil, 3},
		{"one at a time", 1, nil, 1},
		{"off", -1, []string{"http://a/", "http://b/", "http://c/"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const fetch = 2 * time.Second
				web := &fakeWeb{links: map[string][]string{}, slow: map[string]time.Duration{"/robots.txt": fetch}}
				for _, h := range []string{"a", "b", "c"} {
					chain(web.links, h, 1)
				}
				tr := polite.New(web, pacing)
				f := frontier.New(tr, frontier.Options{RobotsPrefetch: tt.prefetch})
				mustAdd(t, f, "http://a/", "http://b/", "http://c/")
				c := newCrawler(f, tr)
				c.run(context.Background(), 1)

				var waited []string
				for _, w := range waitedInTransport(c.handed(), web.pages()) {
					u, _, _ := strings.Cut(w, " ")
					waited = append(waited, u)
				}
				if !slices.Equal(waited, tt.wantWaited) {
					t.Errorf("pages that waited in the transport: %q; want %q", waited, tt.wantWaited)
				}
				atOnce := 0
				var robots []start
				for _, s := range web.log() {
					if strings.HasSuffix(s.url, "/robots.txt") {
						robots = append(robots, s)
					}
				}
				for i := range robots {
					n := 0
					for _, r := range robots {
						if !r.at.After(robots[i].at) && r.at.Add(fetch).After(robots[i].at) {
							n++
						}
					}
					atOnce = max(atOnce, n)
				}
				if len(robots) != 3 || atOnce != tt.wantAtOnce {
					t.Errorf("%d robots.txt fetches, at most %d at once; want 3, %d at once", len(robots), atOnce, tt.wantAtOnce)
				}
				if got := len(web.pages()); got != 6 {
					t.Errorf("%d pages requested; want 6", got)
				}
			})
		})
	}
}

// TestBusyHost checks that a host busy with a request that is not the
// frontier's is asked again until it is free, and its URL handed out then,
// within 50 ms, rather than to a worker that would wait in the transport.
func TestBusyHost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const slow = 5 * time.Second
		web := &fakeWeb{slow: map[string]time.Duration{"/slow": slow}}
		tr := polite.New(web, polite.WithPacing(pace.Policy{BaseDelay: time.Second, Jitter: pace.None, LatencyFactor: pace.None}))
		t0 := time.Now()
		go func() {
			resp, err := (&http.Client{Transport: tr}).Get("http://a/slow")
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
		}()
		synctest.Wait() // robots.txt fetched; /slow waits for its turn
		time.Sleep(time.Second)
		synctest.Wait() // /slow is in flight
		f := frontier.New(tr, frontier.Options{})
		mustAdd(t, f, "http://a/1")
		c := newCrawler(f, tr)
		c.run(context.Background(), 1)

		freed := t0.Add(time.Second + slow)
		pages := web.pages()
		if len(pages) != 2 || pages[1].url != "http://a/1" {
			t.Fatalf("pages: %v; want /slow, then /1", pages)
		}
		if at := pages[1].at; at.Before(freed) || at.After(freed.Add(50*time.Millisecond)) {
			t.Errorf("/1 started at +%v; want within 50ms of /slow's answer at +%v", at.Sub(t0), freed.Sub(t0))
		}
		if w := waitedInTransport(c.handed(), pages); len(w) > 0 {
			t.Errorf("pages waited in the transport: %v", w)
		}
	})
}

// TestAddRejects checks that Add refuses what it cannot queue by a host.
func TestAddRejects(t *testing.T) {
	f := frontier.New(polite.New(&fakeWeb{}, pacing), frontier.Options{})
	for _, u := range []string{"/relative", "mailto:a@b", "ftp://a/x", "http://", "http://a b/"} {
		if queued, err := f.Add(context.Background(), u); err == nil || queued {
			t.Errorf("Add(%q) = %v, %v; want an error", u, queued, err)
		}
	}
	mustAdd(t, f, "http://a/1", "https://a/2", "http://b/1")
	if got := f.HostLen("a"); got != 2 {
		t.Errorf("HostLen(a) = %d; want 2: http and https share the host's pacing key", got)
	}
	if got := f.Len(); got != 3 {
		t.Errorf("Len() = %d; want 3", got)
	}
}

// slowWeb is a fakeWeb whose every answer takes up to 20 ms, at random,
// so that the workers' turns interleave.
type slowWeb struct{ *fakeWeb }

func (w slowWeb) RoundTrip(req *http.Request) (*http.Response, error) {
	time.Sleep(time.Duration(rand.IntN(20_000)) * time.Microsecond)
	return w.fakeWeb.RoundTrip(req)
}

// TestKeepsEveryHostAtItsPace crawls 100 hosts paced at 200 ms with the
// default jitter (a mean pace of 250 ms, a limit of 400 requests a
// second), 10 of them paused for an hour, in virtual time, where the
// machine's load plays no part: the 90 others get at least 0.98 of their
// limit over 7 s from the first request, with 16 or 64 workers. A worker
// left asleep while a host is ready, or parked on a paused host, would
// show here.
func TestKeepsEveryHostAtItsPace(t *testing.T) {
	for _, workers := range []int{16, 64} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const hosts, paused, pages = 100, 10, 40
				web := &fakeWeb{links: map[string][]string{}, pause: map[string]int{}}
				for h := range hosts {
					host := fmt.Sprintf("h%d", h)
					chain(web.links, host, pages)
					for p := range pages { // and a link to the next host
						u := fmt.Sprintf("http://%s/%d", host, p)
						web.links[u] = append(web.links[u], fmt.Sprintf("http://h%d/%d", (h+1)%hosts, p+1))
					}
					if h < paused {
						web.pause[host] = 3600
					}
				}
				tr := polite.New(slowWeb{web}, polite.WithPacing(pace.Policy{BaseDelay: 200 * time.Millisecond}))
				f := frontier.New(tr, frontier.Options{Seen: new(frontier.SeenSet).Seen})
				for h := range hosts {
					mustAdd(t, f, fmt.Sprintf("http://h%d/", h))
				}
				c := newCrawler(f, tr)
				c.retries = 0
				ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
				defer cancel()
				c.run(ctx, workers)

				const window = 7 * time.Second
				log := web.log()
				n := 0
				for _, s := range log {
					var h int
					fmt.Sscanf(hostOf(s.url), "h%d", &h)
					if h >= paused && s.at.Sub(log[0].at) < window {
						n++
					}
				}
				limit := float64(hosts-paused) / 0.25
				got := float64(n) / window.Seconds() / limit
				t.Logf("%.3f of the limit", got)
				if got < 0.98 {
					t.Errorf("%.3f of the limit; want 0.98 at least", got)
				}
			})
		})
	}
}
