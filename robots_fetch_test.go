package polite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
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
)

// redirects answers /robots.txt with n redirects, alternating between two
// origins of the host, then a file disallowing /private.
func redirects(n int) func(*http.Request) (*http.Response, error) {
	return func(r *http.Request) (*http.Response, error) {
		hop := 0
		fmt.Sscanf(r.URL.Path, "/hop%d", &hop)
		if r.URL.Path == "/robots.txt" || strings.HasPrefix(r.URL.Path, "/hop") {
			if hop < n {
				host := []string{"h", "h:8080"}[hop%2]
				return respond(r, 301, "", "Location", fmt.Sprintf("http://%s/hop%d", host, hop+1)), nil
			}
			return respond(r, 200, "User-agent: *\nDisallow: /private\n"), nil
		}
		return respond(r, 200, "page"), nil
	}
}

// robotsAnswer serves /robots.txt with fn and every page with 200.
func robotsAnswer(fn func(*http.Request) (*http.Response, error)) func(*http.Request) (*http.Response, error) {
	return func(r *http.Request) (*http.Response, error) {
		if r.URL.Path == "/robots.txt" {
			return fn(r)
		}
		return respond(r, 200, "page"), nil
	}
}

func status(code int) func(*http.Request) (*http.Response, error) {
	return robotsAnswer(func(r *http.Request) (*http.Response, error) {
		return respond(r, code, "User-agent: *\nDisallow: /\n"), nil
	})
}

// TestRobotsStatusClasses runs every robots.txt pace.Outcome under both failure
// policies and checks whether /private is allowed, whether the failure
// backed the host off, and the status recorded.
func TestRobotsStatusClasses(t *testing.T) {
	tests := []struct {
		name        string
		answer      func(*http.Request) (*http.Response, error)
		open        bool // /private allowed under FailOpen
		closed      bool // /private allowed under FailClosed
		unreachable bool // counts as unreachable: backs the host off
	}{
		{"2xx rules bind", robotsAnswer(func(r *http.Request) (*http.Response, error) {
			return respond(r, 200, "User-agent: *\nDisallow: /private\n"), nil
		}), false, false, false},
		{"3xx chain of 5 followed", redirects(5), false, false, false},
		{"3xx chain of 6 is unavailable", redirects(6), true, true, false},
		{"3xx without Location is unavailable", status(302), true, true, false},
		{"401 unavailable", status(401), true, true, false},
		{"403 unavailable", status(403), true, true, false},
		{"404 unavailable", status(404), true, true, false},
		{"410 unavailable", status(410), true, true, false},
		{"429 unreachable", status(429), true, false, true},
		{"500 unreachable", status(500), true, false, true},
		{"503 unreachable", status(503), true, false, true},
		{"network error unreachable", robotsAnswer(func(*http.Request) (*http.Response, error) {
			return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
		}), true, false, true},
		{"timeout unreachable", robotsAnswer(func(r *http.Request) (*http.Response, error) {
			<-r.Context().Done() // the fetch's own timeout
			return nil, r.Context().Err()
		}), true, false, true},
		{"body cut off unreachable", robotsAnswer(func(r *http.Request) (*http.Response, error) {
			resp := respond(r, 200, "")
			resp.Body = io.NopCloser(io.MultiReader(strings.NewReader("User-agent: *\nDisallow: /private\n"), errReader{io.ErrUnexpectedEOF}))
			return resp, nil
		}), true, false, false},
	}
	for _, tt := range tests {
		for _, policy := range []FailurePolicy{FailOpen, FailClosed} {
			t.Run(tt.name+"/"+policy.String(), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					base := &fakeBase{fn: tt.answer}
					tr := New(base, WithPacing(pace.Policy{BaseDelay: pace.None, Jitter: pace.None}), WithRobotsFailure(policy, policy), WithRobotsTimeout(3*time.Second))
					start := time.Now()
					resp, err := get(tr, "http://h/private", "")
					want := tt.open
					if policy == FailClosed {
						want = tt.closed
					}
					if got := err == nil; got != want {
						t.Fatalf("allowed = %v (err %v); want %v", got, err, want)
					}
					if err != nil {
						var be *RobotsBlockedError
						if !errors.As(err, &be) {
							t.Fatalf("err = %v; want a *RobotsBlockedError", err)
						}
						if tt.unreachable && !strings.Contains(be.Reason, "unreachable") {
							t.Errorf("Reason = %q; want it to say robots.txt was unreachable", be.Reason)
						}
						return
					}
					resp.Body.Close()
					// With BaseDelay 0, only a backoff delays the page.
					pageAt := base.hitList()[len(base.hitList())-1].at
					backedOff := pageAt.Sub(start) >= 5*time.Second
					if tt.unreachable && !backedOff {
						t.Errorf("page at +%v; want the host backed off after an unreachable robots.txt", pageAt.Sub(start))
					}
					if !tt.unreachable && backedOff {
						t.Errorf("page at +%v; want no backoff", pageAt.Sub(start))
					}
				})
			})
		}
	}
}

// bearer is a base that adds credentials, as an x/oauth2 Transport does.
type bearer struct{ next http.RoundTripper }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer secret")
	return b.next.RoundTrip(r)
}

// TestRobotsRedirectToAnotherHost checks which transport a robots.txt
// redirect to another host goes through: WithRobotsTransport's when set,
// an *http.Transport base, which adds no header of its own, and no other
// base, which may add credentials; then the redirect is not followed and
// the file is unreachable. A redirect to another port of the host goes
// through the base, to the same server. The names resolve to one real
// server, which tells them apart by the Host header.
func TestRobotsRedirectToAnotherHost(t *testing.T) {
	tests := []struct {
		name       string
		to         string // where origin.test's robots.txt redirects
		base       func(plain *http.Transport) http.RoundTripper
		robotsBase bool // WithRobotsTransport(plain)
		policy     FailurePolicy
		allowed    bool
		errSays    string   // what Robots.Err says; "" for none
		want       []string // what the server saw: host, path and Authorization
	}{
		{"a base of its own: not followed", "http://other.test/robots.txt", func(p *http.Transport) http.RoundTripper { return bearer{p} }, false, FailOpen,
			true, "WithRobotsTransport", []string{"origin.test /robots.txt Bearer secret"}},
		{"a base of its own, FailClosed", "http://other.test/robots.txt", func(p *http.Transport) http.RoundTripper { return bearer{p} }, false, FailClosed,
			false, "WithRobotsTransport", []string{"origin.test /robots.txt Bearer secret"}},
		{"WithRobotsTransport: followed through it", "http://other.test/robots.txt", func(p *http.Transport) http.RoundTripper { return bearer{p} }, true, FailOpen,
			false, "", []string{"origin.test /robots.txt ", "other.test /robots.txt "}},
		{"an http.Transport base: followed", "http://other.test/robots.txt", func(p *http.Transport) http.RoundTripper { return p }, false, FailOpen,
			false, "", []string{"origin.test /robots.txt ", "other.test /robots.txt "}},
		{"another port of the host: through the base", "http://origin.test:8080/robots.txt", func(p *http.Transport) http.RoundTripper { return bearer{p} }, false, FailOpen,
			false, "", []string{"origin.test /robots.txt Bearer secret", "origin.test:8080 /robots.txt Bearer secret"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var saw []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				saw = append(saw, r.Host+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
				mu.Unlock()
				if r.Host == "origin.test" {
					http.Redirect(w, r, tt.to, http.StatusMovedPermanently)
					return
				}
				fmt.Fprint(w, "User-agent: *\nDisallow: /\n")
			}))
			defer srv.Close()
			plain := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, network, srv.Listener.Addr().String())
			}}
			defer plain.CloseIdleConnections()
			o := opts(WithRobotsFailure(tt.policy, tt.policy))
			if tt.robotsBase {
				o = append(o, WithRobotsTransport(plain))
			}
			tr := New(tt.base(plain), o...)
			req, _ := http.NewRequest("GET", "http://origin.test/page", nil)
			d, err := tr.Check(req)
			if err != nil {
				t.Fatal(err)
			}
			if d.Allowed != tt.allowed || !strings.Contains(errText(d.Robots.Err), tt.errSays) || (tt.errSays == "") != (d.Robots.Err == nil) {
				t.Errorf("Check = Allowed %v, Robots.Err %v; want Allowed %v, an error saying %q", d.Allowed, d.Robots.Err, tt.allowed, tt.errSays)
			}
			mu.Lock()
			defer mu.Unlock()
			if !slices.Equal(saw, tt.want) {
				t.Errorf("the server saw %q; want %q", saw, tt.want)
			}
		})
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func TestRobotsRefreshAndFailureLifetime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var answer atomic.Value // the robots.txt status to give
		answer.Store(200)
		base := &fakeBase{fn: robotsAnswer(func(r *http.Request) (*http.Response, error) {
			return respond(r, answer.Load().(int), "User-agent: *\nDisallow: /private\n"), nil
		})}
		tr := New(base, WithPacing(pace.Policy{BaseDelay: pace.None, Jitter: pace.None}), WithRobotsTTL(time.Hour))
		allowed := func() bool {
			resp, err := get(tr, "http://h/private", "")
			if err == nil {
				resp.Body.Close()
			}
			return err == nil
		}
		if allowed() {
			t.Fatal("allowed before any failure; want the 200 rules to bind")
		}
		// Past the TTL the refresh fails: the last good copy stays in force.
		answer.Store(503)
		time.Sleep(time.Hour)
		if allowed() {
			t.Error("allowed after a failed refresh; want the last good copy kept")
		}
		if n := base.count("/robots.txt"); n != 2 {
			t.Errorf("robots.txt fetched %d times; want 2", n)
		}
		// The failure is kept only 5 minutes: then the next refresh succeeds.
		answer.Store(404)
		time.Sleep(4 * time.Minute)
		allowed()
		if n := base.count("/robots.txt"); n != 2 {
			t.Errorf("robots.txt fetched %d times within 5 minutes of a failure; want 2", n)
		}
		time.Sleep(2 * time.Minute)
		if !allowed() {
			t.Error("blocked after robots.txt went 404; want allowed")
		}
		if n := base.count("/robots.txt"); n != 3 {
			t.Errorf("robots.txt fetched %d times; want 3", n)
		}
	})
}

func TestRobotsFailureWithoutCopyRetriedSoon(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var answer atomic.Int32
		answer.Store(503)
		base := &fakeBase{fn: robotsAnswer(func(r *http.Request) (*http.Response, error) {
			return respond(r, int(answer.Load()), "User-agent: *\nDisallow: /private\n"), nil
		})}
		tr := New(base, WithPacing(pace.Policy{BaseDelay: pace.None, Jitter: pace.None}))
		resp, err := get(tr, "http://h/private", "")
		if err != nil {
			t.Fatalf("FailOpen: err = %v; want allowed", err)
		}
		resp.Body.Close()
		answer.Store(200)
		time.Sleep(5 * time.Minute)
		if _, err := get(tr, "http://h/private", ""); !errors.Is(err, ErrRobotsBlocked) {
			t.Errorf("5 minutes after a failed fetch: err = %v; want the new rules to bind", err)
		}
	})
}

func TestRobotsSizeLimit(t *testing.T) {
	pad := strings.Repeat("# padding line\n", 600<<10/15)
	tests := []struct {
		name    string
		body    string
		blocked bool
	}{
		{"rule within 500 KiB binds", "User-agent: *\nDisallow: /private\n" + pad, true},
		{"rule past 500 KiB ignored", "User-agent: *\n" + pad + "Disallow: /private\n", false},
		{"line cut at the limit dropped", "User-agent: *\n" + pad[:robotsMaxBytes-len("User-agent: *\n")-10] + "\nDisallow: /privateXXXXXXXXXXXX\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var read atomic.Int64
			base := &fakeBase{fn: robotsAnswer(func(r *http.Request) (*http.Response, error) {
				resp := respond(r, 200, "")
				resp.Body = io.NopCloser(&countingReader{r: strings.NewReader(tt.body + strings.Repeat("x", 50<<20)), n: &read})
				return resp, nil
			})}
			_, err := get(New(base, quick...), "http://h/private", "")
			if got := errors.Is(err, ErrRobotsBlocked); got != tt.blocked {
				t.Errorf("blocked = %v (err %v); want %v", got, err, tt.blocked)
			}
			if n := read.Load(); n > robotsMaxBytes+drainBytes+64<<10 {
				t.Errorf("read %d bytes of a 50 MB robots.txt; want about 500 KiB", n)
			}
		})
	}
}

type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// giveUpOneOfTwo sends two requests to origin through tr, inside a
// synctest bubble: one for /a, cancelled once both wait, and one for
// /private. It calls then once the first has returned, and returns what
// each returned.
func giveUpOneOfTwo(tr *PoliteTransport, origin string, then func()) (gaveUp, stayed error) {
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan error)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "GET", origin+"/a", nil)
		_, err := tr.RoundTrip(req)
		first <- err
	}()
	second := make(chan error)
	go func() {
		_, err := get(tr, origin+"/private", "")
		second <- err
	}()
	synctest.Wait()
	cancel()
	gaveUp = <-first
	then()
	return gaveUp, <-second
}

func TestCallerGivingUpDoesNotCancelFetch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		base := &fakeBase{fn: robotsAnswer(func(r *http.Request) (*http.Response, error) {
			<-release
			return respond(r, 200, "User-agent: *\nDisallow: /private\n"), nil
		})}
		tr := New(base, quick...)
		first, second := giveUpOneOfTwo(tr, "http://h", func() { close(release) })
		if !errors.Is(first, context.Canceled) {
			t.Errorf("first caller: %v; want context.Canceled", first)
		}
		if !errors.Is(second, ErrRobotsBlocked) {
			t.Errorf("second caller: %v; want the fetched rules to bind", second)
		}
		if n := base.count("/robots.txt"); n != 1 {
			t.Errorf("robots.txt fetched %d times; want 1", n)
		}
	})
}

// TestRobotsFetchesEndWithTheirWaiters pauses a host for an hour, then
// sends 2,000 requests to 2,000 of its origins, 50 at a time, that give up
// after 50 ms, by a deadline or by being cancelled. A request whose
// deadline falls in the pause fails at once with a *pace.DeadlineError and
// starts no robots.txt fetch; the fetch of a cancelled one is called off
// when it gives up, since nobody waits for it any more. So fetches, their
// goroutines and cache entries stay within MaxOrigins at every step, and
// none reaches the host when the pause ends. A fetch that a request still
// waits for goes on.
func TestRobotsFetchesEndWithTheirWaiters(t *testing.T) {
	const maxOrigins, batches, perBatch = 50, 40, 50
	tests := []struct {
		name     string
		options  []Option
		deadline bool // the requests have a deadline; else they are cancelled
		shared   bool // a RobotsStore fetches, and goes on, as its contract says, when its caller gives up
	}{
		{"deadline", nil, true, false},
		{"cancelled", nil, false, false},
		{"deadline, RobotsStore", []Option{WithRobotsStore(NewMemoryRobotsStore(10 * maxOrigins))}, true, false},
		{"cancelled, RobotsStore", []Option{WithRobotsStore(NewMemoryRobotsStore(10 * maxOrigins))}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := &fakeBase{fn: func(r *http.Request) (*http.Response, error) {
					switch r.URL.Path {
					case "/robots.txt":
						return respond(r, 200, "User-agent: *\nDisallow: /private\n"), nil
					case "/busy":
						return respond(r, 429, "", "Retry-After", "3600"), nil
					}
					return respond(r, 200, "ok"), nil
				}}
				tr := New(base, opts(append([]Option{WithLimits(Limits{MaxKeys: maxOrigins, MaxOrigins: maxOrigins})}, tt.options...)...)...)
				resp, err := get(tr, "http://h/busy", "")
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				goroutines := runtime.NumGoroutine()

				for b := range batches {
					var wg sync.WaitGroup
					for i := range perBatch {
						wg.Go(func() {
							ctx, cancel := context.WithCancel(context.Background())
							if tt.deadline {
								ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
							} else {
								time.AfterFunc(50*time.Millisecond, cancel)
							}
							defer cancel()
							req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("http://h:%d/page", 10000+b*perBatch+i), nil)
							var de *pace.DeadlineError
							_, err := tr.RoundTrip(req)
							if tt.deadline && !errors.As(err, &de) || !tt.deadline && !errors.Is(err, context.Canceled) {
								t.Errorf("RoundTrip = %v; want a *pace.DeadlineError, or context.Canceled", err)
							}
						})
					}
					wg.Wait()
					synctest.Wait()
					if n := tr.robots.running.Load(); n > maxOrigins {
						t.Fatalf("after %d requests, %d robots.txt fetches run; want at most %d", (b+1)*perBatch, n, maxOrigins)
					}
					if n := cached(t, tr.robots); n > maxOrigins {
						t.Fatalf("after %d requests, the robots cache holds %d origins; want at most %d", (b+1)*perBatch, n, maxOrigins)
					}
					if n := runtime.NumGoroutine() - goroutines; n > maxOrigins && !tt.shared {
						t.Fatalf("after %d requests, %d more goroutines; want at most %d", (b+1)*perBatch, n, maxOrigins)
					}
				}
				time.Sleep(2 * time.Hour) // past the pause, and the store's fetches
				synctest.Wait()
				if n := base.count("/robots.txt"); n != 1 && !tt.shared {
					t.Errorf("robots.txt fetched %d times; want once, for the request that paused the host", n)
				}

				// A waiter that stays keeps the fetch that another gave up.
				resp, err = get(tr, "http://h/busy", "")
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				gaveUp, stayed := giveUpOneOfTwo(tr, "http://h:9999", func() {})
				if !errors.Is(gaveUp, context.Canceled) {
					t.Errorf("the request that gave up: %v; want context.Canceled", gaveUp)
				}
				if !errors.Is(stayed, ErrRobotsBlocked) {
					t.Errorf("the request that stayed: %v; want the rules fetched after the pause to refuse it", stayed)
				}
			})
		})
	}
}

func TestHostileRobots(t *testing.T) {
	tests := map[string]string{
		"binary":        "\x00\xff\xfe" + strings.Repeat("\x00User-agent:\x00*\n", 100),
		"huge line":     "User-agent: *\nDisallow: /" + strings.Repeat("a", 600<<10),
		"many stars":    "User-agent: *\nDisallow: /" + strings.Repeat("*a", 5000) + "\n",
		"many groups":   strings.Repeat("User-agent: x\nDisallow: /y\n", 20000),
		"html":          "<!doctype html><html><body>Access denied</body></html>",
		"crawl-delay":   "User-agent: *\nCrawl-delay: 1e300\nCrawl-delay: NaN\nCrawl-delay: -1\n",
		"odd separator": "User-agent *\nDisallow /\n:::\n",
	}
	for name, body := range tests {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				resp, err := get(New(site(body), quick...), "http://h/some/page", "")
				if err != nil && !errors.Is(err, ErrRobotsBlocked) {
					t.Fatalf("err = %v; want a decision", err)
				}
				if err == nil {
					resp.Body.Close()
				}
				if waited := time.Since(start); waited > defaultPacing.MaxCrawlDelay {
					t.Errorf("waited %v; want at most the 60s Crawl-delay cap", waited)
				}
			})
		})
	}
}

func TestRobotsCacheIsBounded(t *testing.T) {
	tr := New(site(""), opts(WithLimits(Limits{MaxKeys: 10, MaxOrigins: 10}))...)
	for i := range 100 {
		resp, err := get(tr, fmt.Sprintf("http://h%d.example/x", i), "")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	n := cached(t, tr.robots)
	if n > 10 {
		t.Errorf("robots cache holds %d origins; want at most 10", n)
	}
}

// TestRobotsFetchWaitsOutBackoff: a robots.txt fetch that must wait for a
// backed-off host longer than WithRobotsTimeout waits, and its rules then
// bind; the wait does not make the file unreachable (and so allow all).
func TestRobotsFetchWaitsOutBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &fakeBase{fn: func(r *http.Request) (*http.Response, error) {
			switch {
			case r.URL.Path == "/robots.txt":
				return respond(r, 200, "User-agent: *\nDisallow: /private\n"), nil
			case r.URL.Path == "/busy":
				return respond(r, 429, "", "Retry-After", "60"), nil
			}
			return respond(r, 200, "page"), nil
		}}
		tr := New(base, WithPacing(pace.Policy{BaseDelay: pace.None, Jitter: pace.None}), WithRobotsTimeout(time.Second))
		resp, err := get(tr, "http://h/busy", "")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		pausedAt := time.Now()

		// A new origin on the paused host: its robots.txt is fetched after the pause.
		if _, err := get(tr, "https://h/private", ""); !errors.Is(err, ErrRobotsBlocked) {
			t.Errorf("err = %v; want the rules fetched after the pause to block /private", err)
		}
		for _, h := range base.hitList() {
			if h.url == "https://h/private" {
				t.Errorf("the disallowed URL reached the base")
			}
			if h.url == "https://h:443/robots.txt" && h.at.Sub(pausedAt) < time.Minute {
				t.Errorf("robots.txt fetched %v into a 60s Retry-After pause", h.at.Sub(pausedAt))
			}
		}
	})
}
