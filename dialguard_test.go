package polite_test

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/pace"
)

// The guard of example_dialguard_test.go, put in front of polite: the
// robots.txt fetch goes through the base transport, so the guard covers it
// and the redirects it follows, and each policy for an unreachable
// robots.txt holds when the guard is what makes it unreachable.

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	accepted atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
	}
	return c, err
}

// newCountedServer starts an httptest server on 127.0.0.1 that counts the
// connections it accepts.
func newCountedServer(t *testing.T, h http.Handler) (*httptest.Server, *countingListener) {
	t.Helper()
	s := httptest.NewUnstartedServer(h)
	l := &countingListener{Listener: s.Listener}
	s.Listener = l
	s.Start()
	t.Cleanup(s.Close)
	return s, l
}

// recordingBase is a base transport that records, for each request, its
// URL and how it ended.
type recordingBase struct {
	base http.RoundTripper

	mu  sync.Mutex // guards log
	log []string
}

func (r *recordingBase) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.base.RoundTrip(req)
	var entry string
	switch {
	case errors.Is(err, errForbiddenAddress):
		entry = req.URL.String() + " refused"
	case err != nil:
		entry = req.URL.String() + " error: " + err.Error()
	default:
		entry = fmt.Sprintf("%s %d", req.URL, resp.StatusCode)
	}
	r.mu.Lock()
	r.log = append(r.log, entry)
	r.mu.Unlock()
	return resp, err
}

func (r *recordingBase) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.log)
}

// newGuardedClient returns a client whose polite transport sends through a
// guarded base that accepts only what allowed accepts, and the recorder
// that sits between them.
func newGuardedClient(t *testing.T, allowed func(netip.AddrPort) bool, opts ...polite.Option) (*http.Client, *polite.PoliteTransport, *recordingBase) {
	t.Helper()
	guarded := guardedTransport(allowed)
	t.Cleanup(guarded.CloseIdleConnections)
	rec := &recordingBase{base: guarded}
	tr := polite.New(rec, append([]polite.Option{polite.WithUserAgent("GuardBot/1.0"), polite.WithPacing(pace.Policy{BaseDelay: pace.None})}, opts...)...)
	return &http.Client{Transport: tr}, tr, rec
}

func TestDialGuardLoopback(t *testing.T) {
	for _, policy := range []polite.FailurePolicy{polite.FailOpen, polite.FailClosed} {
		t.Run(policy.String(), func(t *testing.T) {
			site, counter := newCountedServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprintln(w, "User-agent: *\nAllow: /")
			}))
			client, tr, rec := newGuardedClient(t, publicOnly, polite.WithRobotsFailure(policy, policy))

			resp, err := client.Get(site.URL + "/page")
			if err == nil {
				resp.Body.Close()
				t.Fatalf("Get = %s; want an error", resp.Status)
			}
			var urlErr *url.Error
			if !errors.As(err, &urlErr) {
				t.Errorf("Get error %T; want a *url.Error", err)
			}
			want := []string{site.URL + "/robots.txt refused"}
			switch policy {
			case polite.FailOpen:
				// robots.txt unreachable: every URL allowed, and the guard
				// refuses the page too.
				if !errors.Is(err, errForbiddenAddress) || errors.Is(err, polite.ErrRobotsBlocked) {
					t.Errorf("Get = %v; want an error that matches errForbiddenAddress and not ErrRobotsBlocked", err)
				}
				want = append(want, site.URL+"/page refused")
			case polite.FailClosed:
				// robots.txt unreachable: every URL refused, and the page
				// never reaches the base.
				var blocked *polite.RobotsBlockedError
				if !errors.As(err, &blocked) {
					t.Fatalf("Get = %v; want a *RobotsBlockedError", err)
				}
				if !strings.Contains(blocked.Reason, errForbiddenAddress.Error()) {
					t.Errorf("RobotsBlockedError.Reason = %q; want it to name the guard's refusal", blocked.Reason)
				}
			}
			if got := rec.requests(); !slices.Equal(got, want) {
				t.Errorf("base saw %q; want %q", got, want)
			}
			if n := counter.accepted.Load(); n != 0 {
				t.Errorf("server accepted %d connections; want 0", n)
			}

			req, _ := http.NewRequest(http.MethodGet, site.URL+"/page", nil)
			d, err := tr.Check(req)
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			if d.Allowed != (policy == polite.FailOpen) || !errors.Is(d.Robots.Err, errForbiddenAddress) {
				t.Errorf("Check = Allowed %v, Robots.Err %v; want Allowed %v and the guard's refusal",
					d.Allowed, d.Robots.Err, policy == polite.FailOpen)
			}
		})
	}
}

// TestDialGuardRedirects lets the guard take one local server for a public
// one, whose robots.txt and page redirect to another local server: neither
// redirect gets a connection to it.
func TestDialGuardRedirects(t *testing.T) {
	private, privateCounter := newCountedServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "secret")
	}))
	public, publicCounter := newCountedServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.Redirect(w, r, private.URL+"/robots.txt", http.StatusMovedPermanently)
		case "/away":
			http.Redirect(w, r, private.URL+"/secret", http.StatusFound)
		default:
			fmt.Fprintln(w, "ok")
		}
	}))
	publicAddr := netip.MustParseAddrPort(public.Listener.Addr().String())
	allowed := func(ap netip.AddrPort) bool { return ap == publicAddr || publicOnly(ap) }

	tests := []struct {
		name    string
		policy  polite.FailurePolicy
		path    string
		wantErr error // nil for a 200
		want    []string
	}{
		{"FailOpen", polite.FailOpen, "/page", nil, []string{
			public.URL + "/robots.txt 301",
			private.URL + "/robots.txt refused",
			public.URL + "/page 200",
		}},
		{"FailClosed", polite.FailClosed, "/page", polite.ErrRobotsBlocked, []string{
			public.URL + "/robots.txt 301",
			private.URL + "/robots.txt refused",
		}},
		{"page redirect", polite.FailOpen, "/away", errForbiddenAddress, []string{
			public.URL + "/robots.txt 301",
			private.URL + "/robots.txt refused",
			public.URL + "/away 302",
			private.URL + "/robots.txt refused",
			private.URL + "/secret refused",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client, _, rec := newGuardedClient(t, allowed, polite.WithRobotsFailure(tc.policy, tc.policy))
			resp, err := client.Get(public.URL + tc.path)
			if err == nil {
				resp.Body.Close()
			}
			switch {
			case tc.wantErr == nil && (err != nil || resp.StatusCode != http.StatusOK):
				t.Errorf("Get = %v; want 200 OK", err)
			case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
				t.Errorf("Get = %v; want an error that matches %v", err, tc.wantErr)
			}
			if got := rec.requests(); !slices.Equal(got, tc.want) {
				t.Errorf("base saw %q; want %q", got, tc.want)
			}
		})
	}
	if n := privateCounter.accepted.Load(); n != 0 {
		t.Errorf("private server accepted %d connections; want 0", n)
	}
	if n := publicCounter.accepted.Load(); n == 0 {
		t.Errorf("public server accepted no connection; want some, or the guard refuses everything")
	}
}
