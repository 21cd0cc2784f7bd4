package polite

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestRobotsStoreSharesOneFetch: transports that share a RobotsStore fetch
// an origin's robots.txt once between them, from a real server, and each
// enforces its rules and counts its own refusals.
func TestRobotsStoreSharesOneFetch(t *testing.T) {
	var robots atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			robots.Add(1)
			w.Write([]byte("User-agent: *\nDisallow: /private\n"))
			return
		}
		w.Write([]byte("page"))
	}))
	defer srv.Close()
	store := NewMemoryRobotsStore(100)
	var trs []*PoliteTransport
	for range 3 {
		trs = append(trs, New(nil, opts(WithRobotsStore(store))...))
	}
	for i, tr := range trs {
		c := &http.Client{Transport: tr}
		resp, err := c.Get(srv.URL + "/public")
		if err != nil {
			t.Fatalf("transport %d: %v", i, err)
		}
		resp.Body.Close()
		if _, err := c.Get(srv.URL + "/private"); !errors.Is(err, ErrRobotsBlocked) {
			t.Errorf("transport %d: /private: %v; want ErrRobotsBlocked", i, err)
		}
	}
	if n := robots.Load(); n != 1 {
		t.Errorf("robots.txt fetched %d times by 3 transports sharing a store; want 1", n)
	}
	for i, tr := range trs {
		if s := robotsStats(t, tr); len(s) != 1 || s[0].Refused != 1 || s[0].Rules != 1 {
			t.Errorf("transport %d: robots stats %+v; want one file, one rule, one refusal", i, s)
		}
	}
}

// TestRobotsStoreRevalidates: a transport that finds the shared copy
// expired revalidates it with the validators another transport fetched,
// and on a 304 keeps the shared file in force.
func TestRobotsStoreRevalidates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &fakeBase{fn: robotsAnswer(func(r *http.Request) (*http.Response, error) {
			if r.Header.Get("If-None-Match") == `"v1"` {
				return respond(r, http.StatusNotModified, ""), nil
			}
			return respond(r, 200, "User-agent: *\nDisallow: /private\n", "ETag", `"v1"`), nil
		})}
		store := NewMemoryRobotsStore(100)
		a := New(base, opts(WithRobotsStore(store), WithRobotsTTL(time.Hour))...)
		b := New(base, opts(WithRobotsStore(store), WithRobotsTTL(time.Hour))...)
		if _, err := get(a, "http://h/private", ""); !errors.Is(err, ErrRobotsBlocked) {
			t.Fatalf("a: %v; want ErrRobotsBlocked", err)
		}
		time.Sleep(time.Hour)
		if _, err := get(b, "http://h/private", ""); !errors.Is(err, ErrRobotsBlocked) {
			t.Errorf("b, after a 304: %v; want the shared rules kept", err)
		}
		var conditional []string
		for _, h := range base.hitList() {
			conditional = append(conditional, h.hdrs.Get("If-None-Match"))
		}
		if len(conditional) != 2 || conditional[0] != "" || conditional[1] != `"v1"` {
			t.Errorf("robots.txt requests carried If-None-Match %q; want one plain fetch, then one with a's ETag", conditional)
		}
		// The 304 renewed the shared copy: a reads it without a fetch.
		if _, err := get(a, "http://h/private", ""); !errors.Is(err, ErrRobotsBlocked) {
			t.Errorf("a, after b's 304: %v; want ErrRobotsBlocked", err)
		}
		if n := base.count("/robots.txt"); n != 2 {
			t.Errorf("robots.txt fetched %d times; want 2", n)
		}
	})
}

// storeFunc is a RobotsStore made of a function.
type storeFunc func(ctx context.Context, origin string, fetch func(context.Context, *RobotsFetch) *RobotsFetch) (*RobotsFetch, error)

func (f storeFunc) Load(ctx context.Context, origin string, fetch func(context.Context, *RobotsFetch) *RobotsFetch) (*RobotsFetch, error) {
	return f(ctx, origin, fetch)
}

// TestRobotsStoreCopies: what a store gives decides requests as a file
// the transport fetched itself would, under each failure policy.
func TestRobotsStoreCopies(t *testing.T) {
	rules := []byte("User-agent: *\nDisallow: /private\n")
	tests := []struct {
		name           string
		copy           RobotsFetch
		open, closed   bool // /private allowed under FailOpen, FailClosed
		wantRuleCount  int
		wantStaleStats bool
	}{
		{"a file", RobotsFetch{Status: 200, Body: rules}, false, false, 1, false},
		{"an empty file", RobotsFetch{Status: 200, Body: []byte{}}, true, true, 0, false},
		{"no file (404)", RobotsFetch{Status: 404}, true, true, 0, false},
		{"unreachable", RobotsFetch{Status: 503, Err: errors.New("503")}, true, false, 0, false},
		{"unreachable, a stale copy", RobotsFetch{Status: 200, Err: errors.New("503"), Stale: true, Body: rules}, false, false, 1, true},
	}
	for _, tt := range tests {
		for _, fp := range []FailurePolicy{FailOpen, FailClosed} {
			t.Run(tt.name+"/"+fp.String(), func(t *testing.T) {
				base := site("User-agent: *\nDisallow: /\n") // never asked: the store answers
				store := storeFunc(func(_ context.Context, origin string, _ func(context.Context, *RobotsFetch) *RobotsFetch) (*RobotsFetch, error) {
					f := tt.copy
					f.URL, f.Expires = origin+"/robots.txt", time.Now().Add(time.Hour)
					return &f, nil
				})
				tr := New(base, opts(WithRobotsStore(store), WithRobotsFailure(fp, fp))...)
				_, err := get(tr, "http://h/private", "")
				want := tt.open
				if fp == FailClosed {
					want = tt.closed
				}
				if got := err == nil; got != want {
					t.Errorf("/private allowed %v (err %v); want %v", got, err, want)
				}
				if n := base.count("/robots.txt"); n != 0 {
					t.Errorf("robots.txt fetched %d times; want 0, the store's copy used", n)
				}
				s := robotsStats(t, tr)
				if len(s) != 1 || s[0].Rules != tt.wantRuleCount || s[0].Stale != tt.wantStaleStats {
					t.Errorf("robots stats %+v; want %d rules, stale %v", s, tt.wantRuleCount, tt.wantStaleStats)
				}
			})
		}
	}
}

// TestRobotsStoreFails: when the store fails, the request fails with its
// error and never reaches the server, and the next request asks the store
// again.
func TestRobotsStoreFails(t *testing.T) {
	errDown := errors.New("teststore: down")
	var loads atomic.Int32
	store := storeFunc(func(context.Context, string, func(context.Context, *RobotsFetch) *RobotsFetch) (*RobotsFetch, error) {
		loads.Add(1)
		return nil, errDown
	})
	base := site("")
	tr := New(base, opts(WithRobotsStore(store))...)
	for i := range 2 {
		if _, err := get(tr, "http://h/page", ""); !errors.Is(err, errDown) {
			t.Errorf("request %d: %v; want the store's error", i, err)
		}
	}
	if n := loads.Load(); n != 2 {
		t.Errorf("the store was asked %d times for 2 requests; want 2", n)
	}
	if n := len(base.requests()); n != 0 {
		t.Errorf("the server got %d requests; want 0", n)
	}
	req, _ := http.NewRequest(http.MethodGet, "http://h/page", nil)
	if _, err := tr.Check(req); !errors.Is(err, errDown) {
		t.Errorf("Check: %v; want the store's error", err)
	}
}

// robotsStats returns what tr's Stats say of robots.txt, for all hosts.
func robotsStats(t *testing.T, tr *PoliteTransport) []RobotsStats {
	var rs []RobotsStats
	for _, h := range statsOf(t, tr) {
		rs = append(rs, h.Robots...)
	}
	return rs
}
