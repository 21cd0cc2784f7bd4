package polite

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/polite-go/polite/pace"
)

// TestRobotsFetchHostHeader checks that robots.txt is requested with the
// Host header the origin's pages carry, default port left out, so that a
// virtual host matching Host exactly serves it.
func TestRobotsFetchHostHeader(t *testing.T) {
	var robotsHosts []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			robotsHosts = append(robotsHosts, r.Host)
			if r.Host != "vhost.example" {
				http.NotFound(w, r)
				return
			}
			io.WriteString(w, "User-agent: *\nDisallow: /private\n")
			return
		}
		io.WriteString(w, "page")
	}))
	defer srv.Close()
	base := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return new(net.Dialer).DialContext(ctx, network, srv.Listener.Addr().String())
	}}
	defer base.CloseIdleConnections()
	tr := New(base, quick...)

	_, err := (&http.Client{Transport: tr}).Get("http://vhost.example/private")
	if !errors.Is(err, ErrRobotsBlocked) {
		t.Errorf("GET /private = %v; want ErrRobotsBlocked (robots.txt fetched with Host %q)", err, robotsHosts)
	}
}

// panicky is what a base transport does wrong, for the fault tests.
type panicky int

const (
	basePanics panicky = iota
	baseReturnsNothing
	baseReturnsNoBody
)

func (p panicky) answer(r *http.Request) (*http.Response, error) {
	switch p {
	case basePanics:
		panic("base exploded")
	case baseReturnsNothing:
		return nil, nil
	}
	resp := respond(r, 200, "")
	resp.Body = nil
	return resp, nil
}

// TestBaseMisbehavesFetchingRobots checks that a base transport that
// panics, or answers with no response or no body, while fetching
// robots.txt (on the fetch's own goroutine) makes the file unreachable with
// an error that says what happened, instead of killing the process.
func TestBaseMisbehavesFetchingRobots(t *testing.T) {
	tests := []struct {
		name string
		p    panicky
		want string
	}{
		{"panic", basePanics, "panicked"},
		{"nil response, nil error", baseReturnsNothing, "no response and no error"},
		{"nil body", baseReturnsNoBody, "without a body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := &fakeBase{fn: func(r *http.Request) (*http.Response, error) {
					if r.URL.Path == "/robots.txt" {
						return tt.p.answer(r)
					}
					return respond(r, 200, "ok"), nil
				}}
				tr := New(base, quick...)
				req, _ := http.NewRequest("GET", "http://h/page", nil)
				d, err := tr.Check(req)
				if err != nil {
					t.Fatal(err)
				}
				if !d.Allowed || !strings.Contains(errText(d.Robots.Err), tt.want) {
					t.Errorf("Check = allowed %v, Robots.Err %v; want allowed (FailOpen) and an error saying %q", d.Allowed, d.Robots.Err, tt.want)
				}
				resp, err := get(tr, "http://h/page", "")
				if err != nil {
					t.Fatalf("page after the failed fetch: %v", err)
				}
				resp.Body.Close()
			})
		})
	}
}

// TestBaseMisbehavesOnAPage checks the page path: a panic of the base goes
// on to the caller but frees the host's slot, and (nil, nil) from the base
// becomes an error, not a nil response.
func TestBaseMisbehavesOnAPage(t *testing.T) {
	t.Run("panic frees the slot", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			base := &fakeBase{fn: func(r *http.Request) (*http.Response, error) {
				if r.URL.Path == "/boom" {
					panic("base exploded")
				}
				return respond(r, 200, "ok"), nil
			}}
			tr := New(base, quick...)
			func() {
				defer func() {
					if p := recover(); p == nil {
						t.Errorf("RoundTrip did not pass the base's panic on")
					}
				}()
				get(tr, "http://h/boom", "")
			}()
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "GET", "http://h/next", nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatalf("request after the panic: %v; want the slot free", err)
			}
			resp.Body.Close()
			if s := statsOf(t, tr)[0]; s.InFlight != 0 {
				t.Errorf("in flight = %d; want 0", s.InFlight)
			}
		})
	})
	t.Run("nil response, nil error", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			base := &fakeBase{fn: func(r *http.Request) (*http.Response, error) {
				if r.URL.Path == "/robots.txt" {
					return respond(r, 404, ""), nil
				}
				return nil, nil
			}}
			tr := New(base, quick...)
			req, _ := http.NewRequest("GET", "http://h/page", nil)
			resp, err := tr.RoundTrip(req)
			if resp != nil || err == nil || !strings.Contains(err.Error(), "no response and no error") {
				t.Errorf("RoundTrip = %v, %v; want nil and an error naming the base's fault", resp, err)
			}
		})
	})
}

// TestDeadlineWhileRobotsWaitsBehindABackoff checks that a request whose
// robots.txt fetch cannot start before its deadline, because the host is
// paused, fails at once with a *pace.DeadlineError.
func TestDeadlineWhileRobotsWaitsBehindABackoff(t *testing.T) {
	tests := []struct {
		name string
		key  func(*url.URL) string
	}{
		{"host name", nil},
		{"a key of the user's", func(u *url.URL) string { return "site:" + strings.ToLower(u.Hostname()) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := &fakeBase{fn: func(r *http.Request) (*http.Response, error) {
					if r.URL.Path == "/robots.txt" {
						return respond(r, 404, ""), nil
					}
					return respond(r, 429, "", "Retry-After", "60"), nil
				}}
				o := quick
				if tt.key != nil {
					o = opts(WithPacingKey(tt.key))
				}
				tr := New(base, o...)
				resp, err := get(tr, "http://h/page", "")
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()

				// https://h is another origin of the paused host: its
				// robots.txt must wait 60s.
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, "GET", "https://h/page", nil)
				called := time.Now()
				_, err = tr.RoundTrip(req)
				var de *pace.DeadlineError
				if !errors.As(err, &de) || time.Since(called) != 0 {
					t.Errorf("RoundTrip = %v after %v; want a *pace.DeadlineError at once", err, time.Since(called))
				}
				time.Sleep(time.Minute) // the fetch goes on, for the next request
				synctest.Wait()
			})
		})
	}
}

// TestDeadlineErrorIsATimeout checks the error's message and that net/http
// callers see it as a timeout.
func TestDeadlineErrorIsATimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := New(site(""), WithPacing(pace.Policy{Jitter: pace.None, BaseDelay: 2100 * time.Millisecond}))
		resp, err := get(tr, "http://h/a", "")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		client := &http.Client{Transport: tr}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://h/b", nil)
		_, err = client.Do(req)
		var ue *url.Error
		if !errors.As(err, &ue) || !ue.Timeout() {
			t.Fatalf("client.Do = %v; want a *url.Error whose Timeout() is true", err)
		}
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%v: want a net.Error timeout matching context.DeadlineExceeded", err)
		}
		if want := "pace: next start to h in 2.1s, context deadline in 50ms"; !strings.Contains(err.Error(), want) {
			t.Errorf("message %q; want it to say %q", err, want)
		}
	})
}

// TestRobotsFetchKnowsTheCrawlDelay checks that a robots.txt fetch for a
// new origin of a known host waits the Crawl-delay the host's last request
// knew.
func TestRobotsFetchKnowsTheCrawlDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := site("User-agent: *\nCrawl-delay: 2\n")
		tr := New(base, quick...)
		for _, u := range []string{"http://h/a", "https://h/b"} {
			resp, err := get(tr, u, "")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		hits := base.hitList()
		for i := 1; i < len(hits); i++ {
			if gap := hits[i].at.Sub(hits[i-1].at); gap < 2*time.Second {
				t.Errorf("%s came %v after %s; want at least the Crawl-delay, 2s", hits[i].url, gap, hits[i-1].url)
			}
		}
	})
}

// TestRobotsTimeoutBoundsTheWholeFetch checks that WithRobotsTimeout bounds
// a chain of redirects as a whole, and that a timeout backs the host off
// without counting as a latency sample.
func TestRobotsTimeoutBoundsTheWholeFetch(t *testing.T) {
	t.Run("redirects", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			base := &fakeBase{fn: func(r *http.Request) (*http.Response, error) {
				time.Sleep(290 * time.Millisecond)
				if r.URL.Path == "/robots.txt" || strings.HasPrefix(r.URL.Path, "/hop") {
					return respond(r, 301, "", "Location", "/hop"+r.URL.Path), nil
				}
				return respond(r, 200, "ok"), nil
			}}
			tr := New(base, opts(WithRobotsTimeout(300*time.Millisecond))...)
			t0 := time.Now()
			resp, err := get(tr, "http://h/page", "")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if hops := base.count("") - 1; hops > 2 {
				t.Errorf("%d robots.txt requests under a 300ms timeout of 290ms hops; want at most 2", hops)
			}
			if took := time.Since(t0); took > time.Second {
				t.Errorf("the page took %v; want under 1s", took)
			}
		})
	})
	t.Run("a file that never answers", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			base := &fakeBase{fn: func(r *http.Request) (*http.Response, error) {
				if r.URL.Path == "/robots.txt" {
					<-r.Context().Done()
					return nil, r.Context().Err()
				}
				return respond(r, 200, "ok"), nil
			}}
			tr := New(base, opts(WithRobotsTimeout(2*time.Second))...)
			req, _ := http.NewRequest("GET", "http://h/page", nil)
			d, err := tr.Check(req)
			if err != nil {
				t.Fatal(err)
			}
			synctest.Wait() // the base returns, and its slot is released
			s := statsOf(t, tr)[0]
			if !d.Allowed || d.Robots.Err == nil || s.Level != 1 || s.Latency != 0 {
				t.Errorf("allowed %v, Robots.Err %v, level %d, latency %v; want allowed, unreachable, level 1 and no latency sample",
					d.Allowed, d.Robots.Err, s.Level, s.Latency)
			}
		})
	})
}

// TestRobotsTimeoutWithABaseThatIgnoresItsContext checks that a robots.txt
// fetch through a base that holds it past WithRobotsTimeout, heedless of
// the context, lets its waiters go at the timeout, and the file counts as
// unreachable. The request keeps its slot while the base holds it, for
// one more timeout at most, and is then released once, as a timeout: the
// host backs off as for any timeout, and the late answer is no latency
// sample. Its body is closed.
func TestRobotsTimeoutWithABaseThatIgnoresItsContext(t *testing.T) {
	const timeout = 300 * time.Millisecond
	tests := []struct {
		name  string
		late  time.Duration // when the base answers
		freed time.Duration // when the slot is released
	}{
		{"the base answers within another timeout", 400 * time.Millisecond, 400 * time.Millisecond},
		{"the base holds the request longer", 3 * time.Second, 2 * timeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				lateBody := newBody("User-agent: *\nDisallow: /private\n")
				base := &fakeBase{fn: func(r *http.Request) (*http.Response, error) {
					if r.URL.Path == "/robots.txt" {
						time.Sleep(tt.late) // the context ended before
						resp := respond(r, 200, "")
						resp.Body = lateBody
						return resp, nil
					}
					return respond(r, 200, "ok"), nil
				}}
				var cp *countingPacer
				tr := New(base, opts(WithRobotsTimeout(timeout), WithPacer(func(p pace.Config) pace.Pacer {
					mp, _ := pace.NewMemory(p)
					cp = &countingPacer{Pacer: &externalOnly{mp}}
					return cp
				}))...)
				released := func() []pace.Outcome {
					synctest.Wait()
					cp.mu.Lock()
					defer cp.mu.Unlock()
					return slices.Clone(cp.released)
				}
				t0 := time.Now()
				req, _ := http.NewRequest("GET", "http://h/private", nil)
				d, err := tr.Check(req)
				if err != nil {
					t.Fatal(err)
				}
				if took := time.Since(t0); took != timeout || !d.Allowed || !errors.Is(d.Robots.Err, context.DeadlineExceeded) {
					t.Errorf("Check = Allowed %v, Robots.Err %v after %v; want allowed, a timeout, after %v", d.Allowed, d.Robots.Err, took, timeout)
				}
				time.Sleep(tt.freed - timeout - time.Nanosecond)
				if got := released(); len(got) != 0 {
					t.Errorf("released with %+v at +%v, while the base holds the request; want it kept until +%v", got, time.Since(t0), tt.freed)
				}
				time.Sleep(time.Nanosecond)
				if got := released(); len(got) != 1 || !got[0].TimedOut {
					t.Errorf("at +%v, released with %+v; want once, as a timeout", time.Since(t0), got)
				}
				time.Sleep(tt.late)
				if got := released(); len(got) != 1 {
					t.Errorf("after the base answered, released with %+v; want once", got)
				}
				if n := lateBody.closes.Load(); n != 1 {
					t.Errorf("the late robots.txt body was closed %d times; want once", n)
				}
			})
		})
	}
	t.Run("the page", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			base := &fakeBase{fn: func(r *http.Request) (*http.Response, error) {
				if r.URL.Path == "/robots.txt" {
					time.Sleep(3 * time.Second)
				}
				return respond(r, 200, "ok"), nil
			}}
			tr := New(base, opts(WithRobotsTimeout(timeout))...)
			resp, err := get(tr, "http://h/page", "")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			s := statsOf(t, tr)[0]
			if s.Latency != 0 || s.Level != 1 || s.InFlight != 0 {
				t.Errorf("latency %v, level %d, %d in flight; want no latency sample, level 1, none in flight", s.Latency, s.Level, s.InFlight)
			}
			// The page waits out the timeout's backoff, and nothing more.
			if hits := base.hitList(); !hits[len(hits)-1].at.Equal(s.PausedUntil) {
				t.Errorf("the page started at %v; want %v, the end of the backoff", hits[len(hits)-1].at, s.PausedUntil)
			}
		})
	})
}

// TestAliasesShareOneKey checks that the spellings of one server share one
// robots.txt and one pace.
func TestAliasesShareOneKey(t *testing.T) {
	servers := [][]string{
		{"http://example.com./a", "http://example.com/b", "http://EXAMPLE.com/c"},
		{"http://[::1]/a", "http://[0:0:0:0:0:0:0:1]/b"},
		{"http://[::ffff:127.0.0.1]/a", "http://127.0.0.1/b"},
		{"http://bücher.example/a", "http://BÜCHER.example/b", "http://xn--bcher-kva.example/c"},
	}
	for _, aliases := range servers {
		t.Run(aliases[0], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := site("User-agent: *\nCrawl-delay: 5\n")
				tr := New(base, quick...)
				for _, u := range aliases {
					resp, err := get(tr, u, "")
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
				}
				if n := base.count("/robots.txt"); n != 1 {
					t.Errorf("%d robots.txt fetches for %q; want 1", n, aliases)
				}
				hits := base.hitList()
				for i := 2; i < len(hits); i++ { // the robots.txt fetch, then pages 5s apart
					if gap := hits[i].at.Sub(hits[i-1].at); gap < 5*time.Second {
						t.Errorf("%s came %v after %s; want the Crawl-delay, 5s", hits[i].url, gap, hits[i-1].url)
					}
				}
				if n := len(statsOf(t, tr)); n != 1 {
					t.Errorf("Stats has %d hosts for %q; want 1", n, aliases)
				}
			})
		})
	}
}
