package polite

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/polite-go/polite/pace"
)

// TestPacingKeyDomain checks the registrable domain of hosts, by the
// Public Suffix List.
func TestPacingKeyDomain(t *testing.T) {
	for _, c := range []struct{ url, want string }{
		{"http://example.com/", "example.com"},
		{"https://www.example.com:8443/a", "example.com"},
		{"http://a.b.c.example.com/", "example.com"},
		{"http://WWW.Example.COM./", "example.com"},
		{"http://www.example.co.uk/", "example.co.uk"},
		{"http://shop.example.co.uk/", "example.co.uk"},
		{"http://a.github.io/", "a.github.io"}, // the list's private section
		{"http://x.a.github.io/", "a.github.io"},
		{"http://co.uk/", "co.uk"}, // a public suffix is its own key
		{"http://localhost:8080/", "localhost"},
		{"http://127.0.0.1/", "127.0.0.1"},
		{"http://[::1]:80/", "::1"},
		{"http://bücher.example/", "xn--bcher-kva.example"},
		{"http://www.bücher.de/", "xn--bcher-kva.de"},
	} {
		u, err := url.Parse(c.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := PacingKeyDomain(u); got != c.want {
			t.Errorf("PacingKeyDomain(%s) = %q; want %q", c.url, got, c.want)
		}
	}
}

// TestPacingKeyDomainShares checks that the subdomains of one domain
// share one pace through the transport.
func TestPacingKeyDomainShares(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := site("")
		tr := New(base, WithPacing(pace.Policy{Jitter: pace.None}), WithRobotsMode(RobotsOff), WithPacingKey(PacingKeyDomain))
		for _, u := range []string{"http://a.example.com/", "http://b.example.com/", "http://other.example/"} {
			resp, err := get(tr, u, "")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		hits := base.hitList()
		t0 := hits[0].at
		for i, want := range []time.Duration{0, time.Second, time.Second} {
			if got := hits[i].at.Sub(t0); got != want {
				t.Errorf("request %d (%s) at +%v; want +%v", i, hits[i].url, got, want)
			}
		}
	})
}

// fakeResolver answers from a table, counting lookups; an entry may be
// changed between lookups. block makes lookups wait for their context.
type fakeResolver struct {
	mu      sync.Mutex
	addrs   map[string][]string
	err     map[string]error
	lookups map[string]int
	block   bool
	total   atomic.Int64
}

func newFakeResolver(table map[string][]string) *fakeResolver {
	return &fakeResolver{addrs: table, err: map[string]error{}, lookups: map[string]int{}}
}

func (r *fakeResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	r.total.Add(1)
	r.mu.Lock()
	r.lookups[host]++
	block, err, names := r.block, r.err[host], r.addrs[host]
	r.mu.Unlock()
	if block {
		<-ctx.Done()
		return nil, &net.DNSError{Err: ctx.Err().Error(), Name: host, IsTimeout: true}
	}
	if err != nil {
		return nil, err
	}
	if names == nil {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []netip.Addr
	for _, s := range names {
		out = append(out, netip.MustParseAddr(s))
	}
	return out, nil
}

func (r *fakeResolver) set(host string, addrs ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.addrs[host] = addrs
}

func (r *fakeResolver) count(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lookups[host]
}

// TestPacingKeyIP checks the keys the IP key gives, and that a URL whose
// host is an address needs no lookup.
func TestPacingKeyIP(t *testing.T) {
	r := newFakeResolver(map[string][]string{
		"a.example":   {"192.0.2.1"},
		"b.example":   {"192.0.2.1", "192.0.2.2"},
		"v6.example":  {"2001:db8::7"},
		"v4m.example": {"::ffff:192.0.2.9"},
	})
	tr := New(site(""), WithPacingKeyIP(r))
	for _, c := range []struct{ url, want, err string }{
		{"http://a.example/", "192.0.2.1", ""},
		{"https://A.Example.:8443/x", "192.0.2.1", ""},
		{"http://b.example/", "192.0.2.1", ""}, // the first address
		{"http://v6.example/", "2001:db8::7", ""},
		{"http://v4m.example/", "192.0.2.9", ""},
		{"http://198.51.100.4/", "198.51.100.4", ""},
		{"http://[2001:DB8::1]/", "2001:db8::1", ""},
		{"http://nowhere.example/", "", "polite: no pacing key for nowhere.example: lookup nowhere.example: no such host"},
	} {
		u, _ := url.Parse(c.url)
		got, err := tr.PacingKeyContext(context.Background(), u)
		if got != c.want || errText(err) != c.err {
			t.Errorf("PacingKeyContext(%s) = %q, %v; want %q, %q", c.url, got, err, c.want, c.err)
		}
		if got := tr.PacingKey(u); got != c.want {
			t.Errorf("PacingKey(%s) = %q; want %q", c.url, got, c.want)
		}
	}
	if r.count("198.51.100.4") != 0 || r.count("2001:db8::1") != 0 {
		t.Errorf("an address was looked up")
	}
}

// TestPacingKeyIPLookups checks that a host is looked up once per TTL,
// however many requests go to it and however many at once, that an
// address in force stays while the answers hold it, and that a failure is
// remembered for 30 seconds.
func TestPacingKeyIPLookups(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newFakeResolver(map[string][]string{"a.example": {"192.0.2.1", "192.0.2.2"}})
		base := site("")
		tr := New(base, WithPacing(pace.Policy{BaseDelay: pace.None, Jitter: pace.None, LatencyFactor: pace.None, MaxInFlight: pace.None}),
			WithRobotsMode(RobotsOff), WithPacingKeyIP(r))
		burst := func() {
			var wg sync.WaitGroup
			for range 50 {
				wg.Go(func() {
					resp, err := get(tr, "http://a.example/", "")
					if err != nil {
						t.Error(err)
						return
					}
					resp.Body.Close()
				})
			}
			wg.Wait()
		}
		key := func() string { return tr.PacingKey(&url.URL{Scheme: "http", Host: "a.example"}) }
		for i := range 3 {
			burst()
			time.Sleep(resolveTTL / 3)
			burst()
			if got := r.count("a.example"); got != i+1 {
				t.Errorf("after %v, %d lookups; want %d", time.Duration(i)*resolveTTL, got, i+1)
			}
			time.Sleep(resolveTTL - resolveTTL/3)
			r.set("a.example", "192.0.2.2", "192.0.2.1") // the order turns; the address in force stays
		}
		if k := key(); k != "192.0.2.1" {
			t.Errorf("key %q after the answers turned; want the address in force, 192.0.2.1", k)
		}
		r.set("a.example", "192.0.2.3")
		time.Sleep(resolveTTL)
		if k := key(); k != "192.0.2.3" {
			t.Errorf("key %q after the address went; want 192.0.2.3", k)
		}

		r.mu.Lock()
		r.err["a.example"] = errors.New("server misbehaving")
		r.mu.Unlock()
		time.Sleep(resolveTTL)
		before := r.count("a.example")
		hits := len(base.hitList())
		for range 3 {
			_, err := get(tr, "http://a.example/", "")
			var re *ResolveError
			if !errors.As(err, &re) || re.Host != "a.example" || re.Err.Error() != "server misbehaving" {
				t.Fatalf("RoundTrip = %v; want a *ResolveError for a.example", err)
			}
		}
		if n := r.count("a.example") - before; n != 1 {
			t.Errorf("%d lookups for three requests after a failure; want 1", n)
		}
		if n := len(base.hitList()) - hits; n != 0 {
			t.Errorf("%d requests sent without a key; want 0", n)
		}
		r.mu.Lock()
		delete(r.err, "a.example")
		r.mu.Unlock()
		time.Sleep(resolveRetry)
		if k := key(); k != "192.0.2.3" {
			t.Errorf("key %q 30s after a failure; want 192.0.2.3", k)
		}
	})
}

// TestPacingKeyIPContext checks that a lookup runs within the request's
// context: one that ends fails the request with its error, leaves nothing
// in the cache, and does not fail another request waiting for the same
// lookup.
func TestPacingKeyIPContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newFakeResolver(map[string][]string{"a.example": {"192.0.2.1"}})
		r.block = true
		tr := New(site(""), WithPacingKeyIP(r))
		u := &url.URL{Scheme: "http", Host: "a.example"}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		second := make(chan error)
		go func() {
			time.Sleep(100 * time.Millisecond) // joins the first request's lookup
			r.mu.Lock()
			r.block = false
			r.mu.Unlock()
			_, err := tr.PacingKeyContext(context.Background(), u)
			second <- err
		}()
		if _, err := tr.PacingKeyContext(ctx, u); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("PacingKeyContext = %v; want the context's deadline", err)
		}
		if err := <-second; err != nil {
			t.Errorf("the request that waited for the lookup: %v; want its own lookup to succeed", err)
		}
		if n := r.count("a.example"); n != 2 {
			t.Errorf("%d lookups; want 2", n)
		}
	})
}

// TestPacingKeyIPBound checks that the cache keeps within MaxResolved.
func TestPacingKeyIPBound(t *testing.T) {
	r := newFakeResolver(map[string][]string{})
	for i := range 100 {
		r.addrs[fmt.Sprintf("h%d.example", i)] = []string{fmt.Sprintf("192.0.2.%d", i)}
	}
	tr := New(site(""), WithPacingKeyIP(r), WithLimits(Limits{MaxResolved: 10}))
	for i := range 100 {
		if _, err := tr.PacingKeyContext(context.Background(), &url.URL{Host: fmt.Sprintf("h%d.example", i)}); err != nil {
			t.Fatal(err)
		}
		if n := len(tr.ips.m); n > 10 {
			t.Fatalf("%d names kept after %d; want 10 at most", n, i+1)
		}
	}
}

// TestPacingKeyIPShares checks that two names of one server share one
// pace, and that the requests reach the base in the context that carries
// the address.
func TestPacingKeyIPShares(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newFakeResolver(map[string][]string{"a.example": {"192.0.2.1"}, "b.example": {"192.0.2.1"}, "c.example": {"192.0.2.3"}})
		var dialled []string
		base := &fakeBase{fn: func(req *http.Request) (*http.Response, error) {
			dial := DialResolved(func(ctx context.Context, network, addr string) (net.Conn, error) {
				dialled = append(dialled, addr)
				return nil, errors.New("not dialled")
			})
			dial(req.Context(), "tcp", req.URL.Host+":80")
			return respond(req, 200, "ok"), nil
		}}
		tr := New(base, WithPacing(pace.Policy{Jitter: pace.None}), WithPacingKeyIP(r))
		for _, u := range []string{"http://a.example/", "http://b.example/", "http://c.example/"} {
			resp, err := get(tr, u, "")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		// robots.txt of a, a's page; robots.txt of b a second later, b's
		// page a second after that; c's at once.
		want := []string{"192.0.2.1:80 +0s", "192.0.2.1:80 +1s", "192.0.2.1:80 +2s", "192.0.2.1:80 +3s", "192.0.2.3:80 +0s", "192.0.2.3:80 +1s"}
		hits := base.hitList()
		var got []string
		for i, h := range hits {
			got = append(got, fmt.Sprintf("%s +%v", dialled[i], h.at.Sub(hits[0].at)))
		}
		got[4] = fmt.Sprintf("%s +%v", dialled[4], hits[4].at.Sub(hits[4].at))
		got[5] = fmt.Sprintf("%s +%v", dialled[5], hits[5].at.Sub(hits[4].at))
		if strings.Join(got, ", ") != strings.Join(want, ", ") {
			t.Errorf("dials and starts:\n%s\nwant\n%s", strings.Join(got, ", "), strings.Join(want, ", "))
		}
	})
}

// TestDialResolved checks the dial: the address the context carries for
// the host dialled, the address asked for otherwise.
func TestDialResolved(t *testing.T) {
	var got string
	dial := DialResolved(func(ctx context.Context, network, addr string) (net.Conn, error) {
		got = network + " " + addr
		return nil, errors.New("no")
	})
	ctx := withDialTarget(context.Background(), &dialTarget{host: "a.example", addr: netip.MustParseAddr("192.0.2.1")})
	v6 := withDialTarget(context.Background(), &dialTarget{host: "a.example", addr: netip.MustParseAddr("2001:db8::1")})
	for _, c := range []struct {
		ctx        context.Context
		addr, want string
	}{
		{ctx, "a.example:443", "tcp 192.0.2.1:443"},
		{ctx, "A.EXAMPLE.:80", "tcp 192.0.2.1:80"},
		{v6, "a.example:80", "tcp [2001:db8::1]:80"},
		{ctx, "proxy.example:3128", "tcp proxy.example:3128"}, // a proxy's address
		{context.Background(), "a.example:443", "tcp a.example:443"},
	} {
		dial(c.ctx, "tcp", c.addr)
		if got != c.want {
			t.Errorf("dial %s: %s; want %s", c.addr, got, c.want)
		}
	}
}

// TestPacingKeyIPDials checks end to end, on loopback, that the
// connections of pages and of robots.txt go to the address the key
// names: the names exist only in the fake resolver, so a dial of the name
// would fail. It checks the base New builds, and one the program builds
// with DialResolved.
func TestPacingKeyIPDials(t *testing.T) {
	var robots atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			robots.Add(1)
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
			return
		}
		fmt.Fprint(w, r.Host)
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	r := newFakeResolver(map[string][]string{"site-a.test": {"127.0.0.1"}, "site-b.test": {"127.0.0.1"}})
	own := &http.Transport{DialContext: DialResolved(nil)}
	defer own.CloseIdleConnections()
	for _, c := range []struct {
		name string
		base http.RoundTripper
	}{{"New's base", nil}, {"the program's", own}} {
		t.Run(c.name, func(t *testing.T) {
			robots.Store(0)
			tr := New(c.base, WithPacing(pace.Policy{BaseDelay: pace.None, Jitter: pace.None}), WithPacingKeyIP(r))
			defer tr.CloseIdleConnections()
			client := &http.Client{Transport: tr}
			for _, host := range []string{"site-a.test", "site-b.test"} {
				resp, err := client.Get("http://" + host + ":" + port + "/page")
				if err != nil {
					t.Fatal(err)
				}
				body := make([]byte, 64)
				n, _ := resp.Body.Read(body)
				resp.Body.Close()
				if string(body[:n]) != host+":"+port {
					t.Errorf("the server saw Host %q; want %s:%s", body[:n], host, port)
				}
			}
			if n := robots.Load(); n != 2 {
				t.Errorf("%d robots.txt fetched; want 2, one per origin, through the key's address", n)
			}
			if _, err := client.Get("http://site-a.test:" + port + "/private"); !errors.Is(err, ErrRobotsBlocked) {
				t.Errorf("GET /private = %v; want a refusal", err)
			}
		})
	}
}

// BenchmarkPacingKeyIP is the cost of the IP key once a host's address
// is cached, cycling through 1,000 hosts, and the lookups it made: one per
// host (within resolveTTL, which a run does not outlast), reported as
// lookups/host. "roundtrip" is RoundTrip with the IP key over the
// benchmarks' base that does nothing, robots.txt off, and "roundtrip/host
// key" the same with the default key.
func BenchmarkPacingKeyIP(b *testing.B) {
	const hosts = 1000
	table := map[string][]string{}
	var urls []*url.URL
	for i := range hosts {
		h := fmt.Sprintf("h%d.example", i)
		table[h] = []string{fmt.Sprintf("198.51.%d.%d", i/256, i%256)}
		urls = append(urls, &url.URL{Scheme: "http", Host: h, Path: "/"})
	}
	r := newFakeResolver(table)
	tr := New(newNopBase(""), WithUserAgent(benchUA), WithRobotsMode(RobotsOff),
		WithPacing(pace.Policy{BaseDelay: pace.None, Jitter: pace.None, LatencyFactor: pace.None, MaxInFlight: pace.None}),
		WithPacingKeyIP(r))
	ctx := context.Background()
	b.Run("key", func(b *testing.B) {
		i := 0
		loopCPU(b, func() {
			if _, err := tr.PacingKeyContext(ctx, urls[i%hosts]); err != nil {
				b.Fatal(err)
			}
			i++
		})
		b.ReportMetric(float64(r.total.Load())/hosts, "lookups/host")
	})
	hostKeyed := New(newNopBase(""), WithUserAgent(benchUA), WithRobotsMode(RobotsOff),
		WithPacing(pace.Policy{BaseDelay: pace.None, Jitter: pace.None, LatencyFactor: pace.None, MaxInFlight: pace.None}))
	for _, c := range []struct {
		name string
		tr   *PoliteTransport
	}{{"roundtrip", tr}, {"roundtrip/host key", hostKeyed}} {
		b.Run(c.name, func(b *testing.B) {
			reqs := make([]*http.Request, hosts)
			for i, u := range urls {
				reqs[i] = benchRequest(b, u.String(), benchUA)
			}
			i := 0
			loopCPU(b, func() {
				if _, err := c.tr.RoundTrip(reqs[i%hosts]); err != nil {
					b.Fatal(err)
				}
				i++
			})
			b.ReportMetric(float64(r.total.Load())/hosts, "lookups/host")
		})
	}
}
