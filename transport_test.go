package polite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/polite-go/polite/pace"
	"golang.org/x/time/rate"
)

// snapshot is what a caller could observe of a request.
type snapshot struct {
	method, url, host string
	header            http.Header
	body              io.ReadCloser
	contentLength     int64
	ctx               context.Context
}

func snap(r *http.Request) snapshot {
	return snapshot{r.Method, r.URL.String(), r.Host, r.Header.Clone(), r.Body, r.ContentLength, r.Context()}
}

func TestRoundTripLeavesRequestUnchanged(t *testing.T) {
	tests := []struct {
		name string
		url  string
		ua   string // the request's own User-Agent; "" for none
		opts []Option
	}{
		{"adds User-Agent on a copy", "http://h/ok", "", opts(WithUserAgent("MyBot/1.0"))},
		{"keeps the caller's User-Agent", "http://h/ok", "Other/2", opts(WithUserAgent("MyBot/1.0"))},
		{"no User-Agent anywhere", "http://h/ok", "", quick},
		{"blocked", "http://h/private", "", opts(WithUserAgent("MyBot/1.0"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := site("User-agent: *\nDisallow: /private\n")
			tr := New(base, tt.opts...)
			req, _ := http.NewRequest("POST", tt.url, newBody("payload"))
			req.Header.Set("X-Custom", "1")
			if tt.ua != "" {
				req.Header.Set("User-Agent", tt.ua)
			}
			before := snap(req)
			resp, err := tr.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
			if after := snap(req); !reflect.DeepEqual(before, after) {
				t.Errorf("request changed:\nbefore %+v\nafter  %+v", before, after)
			}
			for _, h := range base.hitList() {
				if strings.HasSuffix(h.url, "/ok") {
					want := tt.ua
					if want == "" && len(tt.opts) > len(quick) {
						want = "MyBot/1.0"
					}
					if h.ua != want {
						t.Errorf("base saw User-Agent %q; want %q", h.ua, want)
					}
				}
			}
		})
	}
}

func TestRoundTripClosesBodyOnce(t *testing.T) {
	tests := []struct {
		name    string
		robots  func(*http.Request) (*http.Response, error)
		page    func(*http.Request) (*http.Response, error)
		url     string
		opts    []Option
		ctx     func() context.Context
		wantErr error
	}{
		{name: "allowed", url: "http://h/ok"},
		{name: "blocked", url: "http://h/private", wantErr: ErrRobotsBlocked},
		{name: "cancelled before robots.txt", url: "http://h/ok", wantErr: context.Canceled,
			ctx: func() context.Context { ctx, cancel := context.WithCancel(context.Background()); cancel(); return ctx }},
		{name: "base fails", url: "http://h/ok", wantErr: io.ErrUnexpectedEOF,
			page: func(*http.Request) (*http.Response, error) { return nil, io.ErrUnexpectedEOF }},
		{name: "robots unreachable, fail closed", url: "http://h/ok", wantErr: ErrRobotsBlocked,
			robots: func(r *http.Request) (*http.Response, error) { return respond(r, 503, ""), nil },
			opts:   []Option{WithRobotsFailure(FailClosed, FailClosed)}},
		{name: "robots.txt itself", url: "http://h/robots.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := &fakeBase{fn: func(r *http.Request) (*http.Response, error) {
				if r.URL.Path == "/robots.txt" && tt.robots != nil {
					return tt.robots(r)
				}
				if r.URL.Path != "/robots.txt" && tt.page != nil {
					return tt.page(r)
				}
				return site("User-agent: *\nDisallow: /private\n").fn(r)
			}}
			tr := New(base, opts(tt.opts...)...)
			ctx := context.Background()
			if tt.ctx != nil {
				ctx = tt.ctx()
			}
			body := newBody("payload")
			req, _ := http.NewRequestWithContext(ctx, "POST", tt.url, body)
			resp, err := tr.RoundTrip(req)
			if !errors.Is(err, tt.wantErr) && !(err == nil && tt.wantErr == nil) {
				t.Fatalf("err = %v; want %v", err, tt.wantErr)
			}
			if err == nil {
				resp.Body.Close()
			} else if resp != nil {
				t.Errorf("got a response together with error %v", err)
			}
			if n := body.closes.Load(); n != 1 {
				t.Errorf("request body closed %d times; want 1", n)
			}
		})
	}
}

func TestRoundTripClosesBodyWhenWaitIsCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := New(site(""), WithPacing(pace.Policy{BaseDelay: 10 * time.Second, Jitter: pace.None}))
		first, err := get(tr, "http://h/1", "")
		if err != nil {
			t.Fatal(err)
		}
		first.Body.Close()

		ctx, cancel := context.WithCancel(context.Background())
		body := newBody("x")
		req, _ := http.NewRequestWithContext(ctx, "POST", "http://h/2", body)
		done := make(chan error)
		go func() {
			_, err := tr.RoundTrip(req)
			done <- err
		}()
		time.Sleep(time.Second)
		synctest.Wait()
		start := time.Now()
		cancel()
		err = <-done
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v; want context.Canceled", err)
		}
		if waited := time.Since(start); waited != 0 {
			t.Errorf("returned %v after cancel; want at once", waited)
		}
		if n := body.closes.Load(); n != 1 {
			t.Errorf("body closed %d times; want 1", n)
		}
	})
}

func TestRoundTripDropsResponseReturnedWithError(t *testing.T) {
	closed := newBody("")
	base := &fakeBase{fn: func(r *http.Request) (*http.Response, error) {
		if r.URL.Path == "/robots.txt" {
			return respond(r, 404, ""), nil
		}
		resp := respond(r, 200, "")
		resp.Body = closed
		return resp, errors.New("broken base")
	}}
	resp, err := get(New(base, quick...), "http://h/x", "")
	if resp != nil || err == nil {
		t.Fatalf("RoundTrip = %v, %v; want nil response and an error", resp, err)
	}
	if closed.closes.Load() != 1 {
		t.Errorf("the dropped response body was closed %d times; want 1", closed.closes.Load())
	}
}

func TestBlockedRequestNeverReachesServer(t *testing.T) {
	var pages atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
			return
		}
		pages.Add(1)
		fmt.Fprint(w, "page")
	}))
	defer srv.Close()
	client := &http.Client{Transport: New(srv.Client().Transport, quick...)}

	_, err := client.Get(srv.URL + "/private/data")
	var ue *url.Error
	if !errors.As(err, &ue) || !errors.Is(err, ErrRobotsBlocked) {
		t.Fatalf("Get = %v; want a *url.Error wrapping ErrRobotsBlocked", err)
	}
	var be *RobotsBlockedError
	if !errors.As(err, &be) || be.Rule != "Disallow: /private/" {
		t.Errorf("errors.As RobotsBlockedError = %+v; want the deciding rule", be)
	}
	if n := pages.Load(); n != 0 {
		t.Errorf("server got %d page requests; want 0", n)
	}
	resp, err := client.Get(srv.URL + "/public")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "page" || pages.Load() != 1 {
		t.Errorf("allowed page: body %q, server pages %d; want \"page\", 1", b, pages.Load())
	}
}

// TestOpaqueURLsAreDecidedOnTheServersPath sends URLs whose Opaque holds
// the request-target, as net/http writes it, to a real server: each is
// decided on the path the server receives, and one that names no path or
// another origin is refused before it is sent.
func TestOpaqueURLsAreDecidedOnTheServersPath(t *testing.T) {
	var mu sync.Mutex
	var got []string // the paths the server received
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nDisallow: /\nAllow: /public\n")
			return
		}
		mu.Lock()
		got = append(got, r.URL.Path)
		mu.Unlock()
	}))
	defer srv.Close()
	host := srv.Listener.Addr().String()
	tests := []struct {
		name    string
		u       *url.URL
		mode    RobotsMode
		want    string // the path the server receives; "" for none
		wantErr string // what the error says; "robots" for ErrRobotsBlocked
	}{
		{"absolute form, disallowed", &url.URL{Scheme: "http", Host: host, Opaque: "//" + host + "/private/page"}, RobotsEnforce, "", "robots"},
		{"absolute form, allowed", &url.URL{Scheme: "http", Host: host, Opaque: "//" + host + "/public"}, RobotsEnforce, "/public", ""},
		{"path as written, disallowed", &url.URL{Scheme: "http", Host: host, Opaque: "/private/page"}, RobotsEnforce, "", "robots"},
		{"Path says robots.txt, Opaque does not", &url.URL{Scheme: "http", Host: host, Path: "/robots.txt", Opaque: "//" + host + "/private/page"}, RobotsEnforce, "", "robots"},
		{"another origin", &url.URL{Scheme: "http", Host: host, Opaque: "//other.example/public"}, RobotsEnforce, "", "names http://other.example:80, not the URL's origin"},
		{"no path", &url.URL{Scheme: "http", Host: host, Opaque: "private/page"}, RobotsEnforce, "", "names no path"},
		{"robots.txt off", &url.URL{Scheme: "http", Host: host, Opaque: "//" + host + "/private/page"}, RobotsOff, "/private/page", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			got = nil
			mu.Unlock()
			tr := New(srv.Client().Transport, opts(WithRobotsMode(tt.mode))...)
			body := newBody("x")
			req := &http.Request{Method: "POST", URL: tt.u, Header: http.Header{}, Body: body, Host: host}
			resp, err := tr.RoundTrip(req)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("RoundTrip = %v; want a response", err)
			case tt.wantErr == "robots" && !errors.Is(err, ErrRobotsBlocked):
				t.Errorf("RoundTrip = %v, %v; want ErrRobotsBlocked", resp, err)
			case tt.wantErr != "" && tt.wantErr != "robots" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("RoundTrip = %v, %v; want an error saying %q", resp, err, tt.wantErr)
			}
			if resp != nil {
				resp.Body.Close()
			}
			if n := body.closes.Load(); n != 1 {
				t.Errorf("request body closed %d times; want 1", n)
			}
			mu.Lock()
			defer mu.Unlock()
			var want []string
			if tt.want != "" {
				want = []string{tt.want}
			}
			if !slices.Equal(got, want) {
				t.Errorf("the server received %q; want %q", got, want)
			}
		})
	}
}

func TestRedirectHopsAreChecked(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
		case "/start":
			http.Redirect(w, r, "/private", http.StatusFound)
		default:
			t.Errorf("server got %s", r.URL.Path)
		}
	}))
	defer srv.Close()
	client := &http.Client{Transport: New(srv.Client().Transport, quick...)}
	if _, err := client.Get(srv.URL + "/start"); !errors.Is(err, ErrRobotsBlocked) {
		t.Errorf("Get through a redirect into a disallowed path = %v; want ErrRobotsBlocked", err)
	}
}

func TestOneRobotsFetchForManyFirstRequests(t *testing.T) {
	var robots, pages atomic.Int32
	release, arrived := make(chan struct{}), make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			robots.Add(1)
			once.Do(func() { close(arrived) })
			<-release // hold the fetch so that every request arrives while it runs
			fmt.Fprint(w, "User-agent: *\nDisallow: /no\n")
			return
		}
		pages.Add(1)
	}))
	defer srv.Close()
	tr := New(srv.Client().Transport, opts(WithPacing(pace.Policy{MaxInFlight: 1000}))...)

	const n = 1000
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := "/yes"
			if i%2 == 0 {
				path = "/no"
			}
			resp, err := get(tr, srv.URL+path, "")
			if err == nil {
				resp.Body.Close()
			} else if !errors.Is(err, ErrRobotsBlocked) {
				errs <- err
			}
		}()
	}
	<-arrived // the fetch reached the server; let it answer
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := robots.Load(); got != 1 {
		t.Errorf("robots.txt fetched %d times; want 1", got)
	}
	if got := pages.Load(); got != n/2 {
		t.Errorf("server got %d pages; want %d", got, n/2)
	}
}

func TestRobotsCacheKeyedByOrigin(t *testing.T) {
	base := site("")
	tr := New(base, quick...)
	for _, u := range []string{"http://Example.com/a", "http://example.com:80/b", "HTTP://EXAMPLE.COM/c", "https://example.com/d", "https://example.com:443/e", "http://example.com:8080/f"} {
		resp, err := get(tr, u, "")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	var robots []string
	for _, u := range base.requests() {
		if strings.HasSuffix(u, "/robots.txt") {
			robots = append(robots, u)
		}
	}
	want := []string{"http://example.com/robots.txt", "https://example.com/robots.txt", "http://example.com:8080/robots.txt"}
	if !reflect.DeepEqual(robots, want) {
		t.Errorf("robots.txt fetches = %q; want %q", robots, want)
	}
}

func TestRobotsFetchCarriesNoCallerHeaders(t *testing.T) {
	base := site("")
	tr := New(base, opts(WithUserAgent("MyBot/1.0 (+https://example.com/bot)"))...)
	req, _ := http.NewRequest("GET", "http://h/x", nil)
	req.Header.Set("Authorization", "Bearer secret")
	req.Header.Set("Cookie", "session=1")
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	h := base.hitList()[0]
	if !strings.HasSuffix(h.url, "/robots.txt") {
		t.Fatalf("first request %s; want robots.txt", h.url)
	}
	if len(h.hdrs) != 1 || h.ua != "MyBot/1.0 (+https://example.com/bot)" {
		t.Errorf("robots.txt fetch headers = %v; want only the configured User-Agent", h.hdrs)
	}
}

func TestCloseIdleConnections(t *testing.T) {
	var n atomic.Int32
	New(closeIdleBase{&n}).CloseIdleConnections()
	if n.Load() != 1 {
		t.Errorf("base CloseIdleConnections called %d times; want 1", n.Load())
	}
	New(roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, nil })).CloseIdleConnections() // must not panic
}

type closeIdleBase struct{ n *atomic.Int32 }

func (closeIdleBase) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("unused")
}
func (b closeIdleBase) CloseIdleConnections() { b.n.Add(1) }

func TestNonHTTPPassesThrough(t *testing.T) {
	base := &fakeBase{fn: func(r *http.Request) (*http.Response, error) { return respond(r, 200, "file"), nil }}
	req, _ := http.NewRequest("GET", "file:///etc/hosts", nil)
	resp, err := New(base, quick...).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := base.requests(); !reflect.DeepEqual(got, []string{"file:///etc/hosts"}) {
		t.Errorf("base got %q; want only the file URL", got)
	}
}

func TestServerResponsesReturnedUntouched(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &fakeBase{fn: func(r *http.Request) (*http.Response, error) {
			if r.URL.Path == "/robots.txt" {
				return respond(r, 404, ""), nil
			}
			return respond(r, 503, "down for maintenance", "Retry-After", "120"), nil
		}}
		resp, err := get(New(base, quick...), "http://h/x", "")
		if err != nil {
			t.Fatalf("err = %v; want nil for a 503 response", err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 503 || string(b) != "down for maintenance" || resp.Header.Get("Retry-After") != "120" {
			t.Errorf("response = %d %q %v; want it as the server sent it", resp.StatusCode, b, resp.Header)
		}
		if n := base.count("/x"); n != 1 {
			t.Errorf("base asked %d times; want 1 (no retry)", n)
		}
	})
}

func TestRobotsFetchIsPaced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := site("")
		resp, err := get(New(base, WithPacing(pace.Policy{Jitter: pace.None})), "http://h/x", "")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		hits := base.hitList()
		if len(hits) != 2 {
			t.Fatalf("hits = %d; want robots.txt then the page", len(hits))
		}
		if gap := hits[1].at.Sub(hits[0].at); gap != time.Second {
			t.Errorf("page came %v after robots.txt; want the 1s base delay", gap)
		}
	})
}

func TestOneHostAcrossSchemesAndPorts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := site("")
		tr := New(base, WithPacing(pace.Policy{Jitter: pace.None}))
		for _, u := range []string{"http://Example.com:80/a", "https://example.com/b"} {
			resp, err := get(tr, u, "")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		hits := base.hitList()
		if len(hits) != 4 {
			t.Fatalf("hits = %d; want two robots.txt and two pages", len(hits))
		}
		for i := 1; i < len(hits); i++ {
			if gap := hits[i].at.Sub(hits[i-1].at); gap != time.Second {
				t.Errorf("gap %d = %v; want 1s: one pacing key for every scheme and port", i, gap)
			}
		}
	})
}

func TestCrawlDelayIsAFloor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := site("User-agent: *\nCrawl-delay: 5\nDisallow:\n\nUser-agent: slowbot\nCrawl-delay: 3600\n")
		tr := New(base, WithPacing(pace.Policy{Jitter: pace.None}))
		for range 3 {
			resp, err := get(tr, "http://h/x", "")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		hits := base.hitList()
		for i := 2; i < len(hits); i++ {
			if gap := hits[i].at.Sub(hits[i-1].at); gap != 5*time.Second {
				t.Errorf("gap %d = %v; want the 5s Crawl-delay", i, gap)
			}
		}

		// A Crawl-delay past MaxCrawlDelay is clamped.
		base = site("User-agent: *\nCrawl-delay: 3600\n")
		tr = New(base, WithPacing(pace.Policy{Jitter: pace.None, MaxCrawlDelay: 7 * time.Second}))
		for range 3 {
			resp, err := get(tr, "http://h/x", "")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		hits = base.hitList()
		if gap := hits[2].at.Sub(hits[1].at); gap != 7*time.Second {
			t.Errorf("gap = %v; want Crawl-delay clamped to 7s", gap)
		}
	})
}

func TestDeadlineBeforeTurnFailsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := New(site(""), WithPacing(pace.Policy{BaseDelay: 10 * time.Second, Jitter: pace.None}))
		resp, err := get(tr, "http://h/1", "")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()

		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://h/2", nil)
		start := time.Now()
		_, err = (&http.Client{Transport: tr}).Do(req)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v; want one matching context.DeadlineExceeded", err)
		}
		var de *pace.DeadlineError
		if !errors.As(err, &de) || de.Key != "h" {
			t.Errorf("errors.As pace.DeadlineError = %+v; want host h", de)
		}
		if waited := time.Since(start); waited != 0 {
			t.Errorf("failed after %v; want at once", waited)
		}
	})
}

func TestGlobalLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := site("")
		tr := New(base, WithPacing(pace.Policy{BaseDelay: pace.None, Jitter: pace.None}), WithGlobalLimiter(rate.NewLimiter(rate.Every(2*time.Second), 1)))
		for _, u := range []string{"http://a/x", "http://b/x"} {
			resp, err := get(tr, u, "")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		hits := base.hitList()
		for i := 1; i < len(hits); i++ {
			if gap := hits[i].at.Sub(hits[i-1].at); gap != 2*time.Second {
				t.Errorf("gap %d = %v; want 2s across hosts, robots.txt included", i, gap)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://a/y", nil) // robots.txt cached: only the limiter waits
		if _, err := tr.RoundTrip(req); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v; want one matching context.DeadlineExceeded", err)
		}
	})
}

func TestLogger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf strings.Builder
		var mu sync.Mutex
		logger := slog.New(slog.NewTextHandler(lockedWriter{&mu, &buf}, &slog.HandlerOptions{
			ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey || a.Key == "duration" {
					return slog.Attr{}
				}
				return a
			},
		}))
		base := &fakeBase{fn: func(r *http.Request) (*http.Response, error) {
			if r.URL.Host == "b" {
				return respond(r, 503, ""), nil
			}
			if r.URL.Path == "/robots.txt" {
				return respond(r, 200, "User-agent: *\nDisallow: /x\nbad line\n"), nil
			}
			return respond(r, 429, "", "Retry-After", "7"), nil
		}}
		tr := New(base, WithPacing(pace.Policy{Jitter: pace.None}), WithLogger(logger))
		for _, u := range []string{"http://a/page", "http://b/page"} {
			if resp, err := get(tr, u, ""); err == nil {
				resp.Body.Close()
			}
		}
		mu.Lock()
		got := buf.String()
		mu.Unlock()
		for _, want := range []string{
			`level=INFO msg="polite: robots.txt fetched" key=a url=http://a/robots.txt status=200 rules=1 skipped_lines=1`,
			`level=INFO msg="polite: waited" key=a url=http://a/page wait=1s`,
			`level=INFO msg="polite: backing off" key=a url=http://a/page status=429 level=1 pause=7s retry_after=7s`,
			`level=WARN msg="polite: robots.txt unreachable" key=b url=http://b/robots.txt status=503 error="http://b/robots.txt answered Service Unavailable" stale=false`,
		} {
			if !strings.Contains(got, want) {
				t.Errorf("log lacks %q; got:\n%s", want, got)
			}
		}
	})
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
