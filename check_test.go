package polite

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"testing"
	"testing/synctest"
	"time"

	"github.com/polite-go/polite/pace"
)

func TestCheck(t *testing.T) {
	const robots = "User-agent: *\nDisallow: /private/\nAllow: /private/ok\nCrawl-delay: 3\n\nUser-agent: mybot\nDisallow: /mine\n"
	const unreachable = "http://h/robots.txt answered Internal Server Error"
	fetched := func(url string, status int) RobotsStats {
		rs := RobotsStats{URL: url, Status: status}
		if status == 200 {
			rs.Rules, rs.CrawlDelay = 3, 3*time.Second // the transport's own User-Agent binds "*"
		}
		return rs
	}
	tests := []struct {
		name    string
		answer  func(*http.Request) (*http.Response, error)
		url     string
		ua      string
		policy  FailurePolicy
		mode    RobotsMode
		want    Decision // its Robots.Err, Robots.FetchedAt and Next set apart
		wantErr string   // Robots.Err's text
	}{
		{"disallowed", nil, "http://h/private/x", "", FailOpen, RobotsEnforce,
			Decision{RobotsKnown: true, Allowed: false, Agent: "go-http-client", Group: "*", Rule: "Disallow: /private/", Robots: fetched("http://h/robots.txt", 200), CrawlDelay: 3 * time.Second, Pace: 3 * time.Second}, ""},
		{"allowed by a rule", nil, "http://h/private/ok", "", FailOpen, RobotsEnforce,
			Decision{RobotsKnown: true, Allowed: true, Agent: "go-http-client", Group: "*", Rule: "Allow: /private/ok", Robots: fetched("http://h/robots.txt", 200), CrawlDelay: 3 * time.Second, Pace: 3 * time.Second}, ""},
		{"allowed, no rule matched", nil, "http://h/public", "", FailOpen, RobotsEnforce,
			Decision{RobotsKnown: true, Allowed: true, Agent: "go-http-client", Group: "*", Robots: fetched("http://h/robots.txt", 200), CrawlDelay: 3 * time.Second, Pace: 3 * time.Second}, ""},
		{"own group", nil, "https://h/mine", "MyBot/2.0", FailOpen, RobotsEnforce,
			Decision{RobotsKnown: true, Allowed: false, Agent: "mybot", Group: "mybot", Rule: "Disallow: /mine", Robots: fetched("https://h/robots.txt", 200), Pace: time.Second}, ""},
		{"a port that is not the default", nil, "https://h:8443/private/x", "", FailOpen, RobotsEnforce,
			Decision{RobotsKnown: true, Allowed: false, Agent: "go-http-client", Group: "*", Rule: "Disallow: /private/", Robots: fetched("https://h:8443/robots.txt", 200), CrawlDelay: 3 * time.Second, Pace: 3 * time.Second}, ""},
		{"robots.txt itself: not consulted", nil, "http://h/robots.txt", "", FailOpen, RobotsEnforce,
			Decision{RobotsKnown: true, Allowed: true, Agent: "go-http-client", Reason: "/robots.txt is always allowed", Pace: time.Second}, ""},
		{"robots.txt off: not consulted", nil, "http://h/private/x", "", FailOpen, RobotsOff,
			Decision{RobotsKnown: true, Mode: RobotsOff, Allowed: true, Agent: "go-http-client", Reason: "robots.txt is off for this request", Pace: time.Second}, ""},
		{"unavailable", status(404), "http://h/private/x", "", FailOpen, RobotsEnforce,
			Decision{RobotsKnown: true, Allowed: true, Agent: "go-http-client", Reason: "robots.txt unavailable (status 404): no rules apply", Robots: fetched("http://h/robots.txt", 404), Pace: time.Second}, ""},
		{"unreachable, fail open", status(500), "http://h/x", "", FailOpen, RobotsEnforce,
			Decision{RobotsKnown: true, Allowed: true, Agent: "go-http-client", Reason: "robots.txt unreachable (" + unreachable + "), and the policy is FailOpen", Robots: fetched("http://h/robots.txt", 500), Pace: 2 * time.Second}, unreachable},
		{"unreachable, fail closed", status(500), "http://h/x", "", FailClosed, RobotsEnforce,
			Decision{RobotsKnown: true, Allowed: false, Agent: "go-http-client", Reason: "robots.txt unreachable (" + unreachable + "), and the policy is FailClosed", Robots: fetched("http://h/robots.txt", 500), Pace: 2 * time.Second}, unreachable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				answer := tt.answer
				if answer == nil {
					answer = site(robots).fn
				}
				base := &fakeBase{fn: answer}
				tr := New(base, WithPacing(pace.Policy{Jitter: pace.None}), WithRobotsFailure(tt.policy, tt.policy), WithRobotsMode(tt.mode))
				req, _ := http.NewRequest("GET", tt.url, nil)
				if tt.ua != "" {
					req.Header.Set("User-Agent", tt.ua)
				}
				t0 := time.Now()
				got, err := tr.Check(req)
				if err != nil {
					t.Fatal(err)
				}
				if gotErr := errText(got.Robots.Err); gotErr != tt.wantErr {
					t.Errorf("Check(%s).Robots.Err = %q; want %q", tt.url, gotErr, tt.wantErr)
				}
				if consulted := tt.want.Robots.URL != ""; got.Robots.FetchedAt.Equal(t0) != consulted {
					t.Errorf("Check(%s).Robots.FetchedAt = %v; want %v if robots.txt was consulted (%v)", tt.url, got.Robots.FetchedAt, t0, consulted)
				}
				if consulted := tt.want.Robots.URL != ""; got.Next.IsZero() == consulted {
					t.Errorf("Check(%s).Next = %v; want a start known if robots.txt was fetched (%v)", tt.url, got.Next, consulted)
				}
				got.Robots.Err, got.Robots.FetchedAt, got.Next = nil, time.Time{}, time.Time{}
				if want := (pace.Policy{Jitter: pace.None}).Effective(); got.Policy != want {
					t.Errorf("Check(%s).Policy = %+v; want the transport's, %+v", tt.url, got.Policy, want)
				}
				got.Policy = pace.Policy{}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("Check(%s) =\n%+v; want\n%+v", tt.url, got, tt.want)
				}
				if n := len(base.requests()) - base.count("/robots.txt"); n != 0 {
					t.Errorf("Check sent %d page requests; want 0", n)
				}
			})
		})
	}
}

// TestCheckErrors checks what Check fails with: a URL that is not http or
// https, and a context that has ended, whatever robots.txt would say and
// whether or not the file is cached.
func TestCheckErrors(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	tests := []struct {
		name   string
		ctx    context.Context
		url    string
		mode   RobotsMode
		cached bool // robots.txt fetched before the call
		want   error
	}{
		{"cancelled, robots.txt not fetched", cancelled, "http://h/x", RobotsEnforce, false, context.Canceled},
		{"cancelled, robots.txt cached", cancelled, "http://h/x", RobotsEnforce, true, context.Canceled},
		{"cancelled, robots.txt off", cancelled, "http://h/x", RobotsOff, false, context.Canceled},
		{"cancelled, /robots.txt itself", cancelled, "http://h/robots.txt", RobotsEnforce, false, context.Canceled},
		{"deadline passed", expired, "http://h/x", RobotsEnforce, false, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := site("User-agent: *\nDisallow: /\n")
			tr := New(base, opts(WithRobotsMode(tt.mode))...)
			if tt.cached {
				req, _ := http.NewRequest("GET", tt.url, nil)
				if _, err := tr.Check(req); err != nil {
					t.Fatal(err)
				}
			}
			fetches := base.count("/robots.txt")
			req, _ := http.NewRequestWithContext(tt.ctx, "GET", tt.url, nil)
			if _, err := tr.Check(req); err != tt.want {
				t.Errorf("Check = %v; want %v", err, tt.want)
			}
			if n := base.count("/robots.txt") - fetches; n != 0 {
				t.Errorf("Check with an ended context fetched robots.txt %d times; want 0", n)
			}
		})
	}
	t.Run("not http or https", func(t *testing.T) {
		req, _ := http.NewRequest("GET", "ftp://h/x", nil)
		if _, err := New(site(""), quick...).Check(req); err == nil {
			t.Error("Check(ftp://h/x) succeeded; want an error")
		}
	})
}

// TestEndedContextStartsNoFetch checks that requests whose context has
// ended before the call start no robots.txt fetch and leave no entry in
// the cache, through each way in.
func TestEndedContextStartsNoFetch(t *testing.T) {
	tests := []struct {
		name string
		call func(*PoliteTransport, *http.Request) error
	}{
		{"Check", func(tr *PoliteTransport, req *http.Request) error { _, err := tr.Check(req); return err }},
		{"RoundTrip", func(tr *PoliteTransport, req *http.Request) error { _, err := tr.RoundTrip(req); return err }},
		{"Robots", func(tr *PoliteTransport, req *http.Request) error { _, err := tr.Robots(req); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := site("")
				tr := New(base, quick...)
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				for i := range 200 {
					req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("http://h%d.example/x", i), nil)
					if err := tt.call(tr, req); !errors.Is(err, context.Canceled) {
						t.Fatalf("%s with a cancelled context = %v; want context.Canceled", tt.name, err)
					}
				}
				synctest.Wait()
				if n := len(base.requests()); n != 0 {
					t.Errorf("200 calls with cancelled contexts sent %d requests; want 0", n)
				}
				if n := cached(t, tr.robots); n != 0 {
					t.Errorf("the robots cache holds %d origins; want 0", n)
				}
			})
		})
	}
}

func TestStats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &fakeBase{fn: func(r *http.Request) (*http.Response, error) {
			switch {
			case r.URL.Hostname() == "b" && r.URL.Path == "/robots.txt":
				return respond(r, 503, ""), nil
			case r.URL.Path == "/robots.txt":
				return respond(r, 200, "User-agent: *\nDisallow: /private\nCrawl-delay: 2\nSitemap: http://a/s.xml\n"), nil
			case r.URL.Path == "/busy":
				return respond(r, 429, "", "Retry-After", "30"), nil
			}
			return respond(r, 200, "ok"), nil
		}}
		tr := New(base, WithPacing(pace.Policy{Jitter: pace.None}))
		for _, u := range []string{"http://a/1", "http://a/private", "https://a/2", "http://a/busy", "http://b/1"} {
			if resp, err := get(tr, u, ""); err == nil {
				resp.Body.Close()
			}
		}
		got := statsOf(t, tr)
		if len(got) != 2 {
			t.Fatalf("Stats() has %d hosts; want 2: %+v", len(got), got)
		}
		a, b := got[0], got[1]
		if a.Key != "a" || a.Requests != 5 || a.Refused != 1 || a.InFlight != 0 || a.Level != 1 || a.Backoffs != 1 || a.RetryAfters != 1 {
			t.Errorf("host a = %+v; want 5 requests (2 robots.txt), 1 blocked, level 1, one backoff with Retry-After", a)
		}
		var busyAt time.Time
		for _, h := range base.hitList() {
			if h.url == "http://a/busy" {
				busyAt = h.at
			}
		}
		if pause := a.PausedUntil.Sub(busyAt); pause != 30*time.Second {
			t.Errorf("host a paused %v after the 429; want Retry-After's 30s", pause)
		}
		if a.Pace != 2*time.Second {
			t.Errorf("host a pace = %v; want 2s (Crawl-delay)", a.Pace)
		}
		if len(a.Robots) != 2 || a.Robots[0].URL != "http://a/robots.txt" || a.Robots[1].URL != "https://a/robots.txt" {
			t.Fatalf("host a robots = %+v; want the http and https files", a.Robots)
		}
		r := a.Robots[0]
		if r.Status != 200 || r.Rules != 1 || r.CrawlDelay != 2*time.Second || r.Refused != 1 || r.Err != nil ||
			!reflect.DeepEqual(r.Sitemaps, []string{"http://a/s.xml"}) {
			t.Errorf("http://a robots = %+v", r)
		}
		if b.Key != "b" || len(b.Robots) != 1 || b.Robots[0].Status != 503 || b.Robots[0].Err == nil || b.Level != 1 {
			t.Errorf("host b = %+v; want an unreachable robots.txt and a backoff", b)
		}
	})
}

// TestPaceAgreesWithCrawlDelay checks that Check and Stats give one pace for
// a host whose robots.txt has a Crawl-delay, before any page request has
// started, and that the pace is the clamped Crawl-delay.
func TestPaceAgreesWithCrawlDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := New(site("User-agent: *\nCrawl-delay: 86400\n"), WithPacing(pace.Policy{Jitter: pace.None}))
		req, _ := http.NewRequest("GET", "http://h/page", nil)
		d, err := tr.Check(req)
		if err != nil {
			t.Fatal(err)
		}
		stats := statsOf(t, tr)
		if len(stats) != 1 {
			t.Fatalf("Stats() has %d hosts; want 1", len(stats))
		}
		if d.Pace != defaultPacing.MaxCrawlDelay || stats[0].Pace != defaultPacing.MaxCrawlDelay {
			t.Errorf("Decision.Pace = %v, HostStats.Pace = %v; want both %v", d.Pace, stats[0].Pace, defaultPacing.MaxCrawlDelay)
		}
	})
}

// TestNilURL checks that RoundTrip and Check give the same error for a
// request without a URL, and that neither panics.
func TestNilURL(t *testing.T) {
	tr := New(site(""), quick...)
	body := newBody("x")
	_, rtErr := tr.RoundTrip(&http.Request{Method: "GET", Header: http.Header{}, Body: body})
	_, checkErr := tr.Check(&http.Request{Method: "GET", Header: http.Header{}})
	if rtErr == nil || checkErr == nil || rtErr.Error() != checkErr.Error() {
		t.Errorf("RoundTrip error %v, Check error %v; want the same error from both", rtErr, checkErr)
	}
	if n := body.closes.Load(); n != 1 {
		t.Errorf("request body closed %d times; want 1", n)
	}
}
