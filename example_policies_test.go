package polite_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/pace"
)

// PacingKeyDomain paces a registrable domain as one: its subdomains share
// its pace.
func ExamplePacingKeyDomain() {
	tr := polite.New(nil, polite.WithPacingKey(polite.PacingKeyDomain))
	for _, raw := range []string{"https://www.example.co.uk/a", "http://shop.example.co.uk/b", "https://blog.example.com/c", "http://127.0.0.1:8080/d"} {
		u, _ := url.Parse(raw)
		fmt.Println(tr.PacingKey(u))
	}
	// Output:
	// example.co.uk
	// example.co.uk
	// example.com
	// 127.0.0.1
}

// hostsFile is a Resolver that answers from a table, as /etc/hosts would.
type hostsFile map[string]string

func (h hostsFile) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	a, ok := h[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []netip.Addr{netip.MustParseAddr(a)}, nil
}

// WithPacingKeyIP paces by server: two sites that one server hosts share
// one pace, and each connection goes to the address its key names.
func ExampleWithPacingKeyIP() {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "this is ", r.Host)
	}))
	defer server.Close()
	_, port, _ := net.SplitHostPort(server.Listener.Addr().String())

	// The names exist only here, and both are the server's loopback address.
	resolver := hostsFile{"blog.test": "127.0.0.1", "shop.test": "127.0.0.1"}
	tr := polite.New(nil, polite.WithPacing(pace.Policy{BaseDelay: pace.None}), polite.WithPacingKeyIP(resolver))
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	for _, host := range []string{"blog.test", "shop.test", "gone.test"} {
		u := "http://" + host + ":" + port + "/"
		key, err := tr.PacingKeyContext(context.Background(), &url.URL{Scheme: "http", Host: host})
		if err != nil {
			fmt.Println(err)
			continue
		}
		resp, err := client.Get(u)
		if err != nil {
			fmt.Println(err)
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Printf("key %s: %s\n", key, body[:len(body)-len(port)-1])
	}
	// Output:
	// key 127.0.0.1: this is blog.test
	// key 127.0.0.1: this is shop.test
	// polite: no pacing key for gone.test: lookup gone.test: no such host
}

// MaxBandwidth caps the bytes a second read from one key's bodies, all
// of them together: here 10,000 bytes a second, so a file of 10,500 bytes
// takes about a second (the first twentieth of a second's worth comes at
// once).
func ExampleWithPacing_maxBandwidth() {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		w.Write(make([]byte, 10_500))
	}))
	defer server.Close()

	tr := polite.New(nil, polite.WithPacing(pace.Policy{BaseDelay: pace.None, MaxBandwidth: 10_000}))
	start := time.Now()
	resp, err := (&http.Client{Transport: tr}).Get(server.URL + "/file")
	if err != nil {
		fmt.Println(err)
		return
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println("read", len(body), "bytes in", time.Since(start).Round(time.Second), err)
	// Output:
	// read 10500 bytes in 1s <nil>
}

// A link checker calls one host at most once a minute and the rest ten
// times a second: a rule gives that host, and another a whole domain, a
// policy of its own, merged over the transport's. Check shows the policy
// in force for each request.
func ExampleWithPacingRules() {
	tr := polite.New(nil,
		polite.WithRobotsMode(polite.RobotsOff),
		polite.WithPacing(pace.Policy{BaseDelay: 100 * time.Millisecond}),
		polite.WithPacingRules(
			polite.PacingRule{Host: "status.example.com", Policy: pace.Policy{BaseDelay: time.Minute}},
			polite.PacingRule{Domain: "cdn.example", Policy: pace.Policy{BaseDelay: 10 * time.Millisecond, MaxInFlight: 8}},
		))
	for _, u := range []string{"https://status.example.com/", "https://www.example.com/", "https://img.cdn.example/a.png"} {
		req, _ := http.NewRequest("GET", u, nil)
		d, err := tr.Check(req)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%s: base delay %v, %d in flight\n", u, d.Policy.BaseDelay, d.Policy.MaxInFlight)
	}
	// Output:
	// https://status.example.com/: base delay 1m0s, 1 in flight
	// https://www.example.com/: base delay 100ms, 1 in flight
	// https://img.cdn.example/a.png: base delay 10ms, 8 in flight
}

// WithPacingFunc is a function that takes a pacing key, here a
// registrable domain, and returns its limits.
func ExampleWithPacingFunc() {
	limits := map[string]pace.Policy{
		"example.org": {BaseDelay: 5 * time.Second, MaxBandwidth: 100 << 10},
	}
	tr := polite.New(nil,
		polite.WithRobotsMode(polite.RobotsOff),
		polite.WithPacingKey(polite.PacingKeyDomain),
		polite.WithPacingFunc(func(domain string) (pace.Policy, bool) {
			p, ok := limits[domain]
			return p, ok
		}))
	for _, u := range []string{"https://www.example.org/", "https://docs.example.org/", "https://example.net/"} {
		req, _ := http.NewRequest("GET", u, nil)
		r, err := tr.Ready(req)
		if err != nil {
			fmt.Println(err)
			continue
		}
		bandwidth := "no cap"
		if r.Policy.MaxBandwidth > 0 {
			bandwidth = fmt.Sprint(r.Policy.MaxBandwidth, " bytes a second")
		}
		fmt.Printf("%s: base delay %v, %s\n", u, r.Policy.BaseDelay, bandwidth)
	}
	// Output:
	// https://www.example.org/: base delay 5s, 102400 bytes a second
	// https://docs.example.org/: base delay 5s, 102400 bytes a second
	// https://example.net/: base delay 1s, no cap
}

// A program that gives the transport its own base sets the base's
// DialContext to DialResolved, so that its connections go to the address
// that the IP key names.
func ExampleDialResolved() {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "this is ", r.Host)
	}))
	defer server.Close()
	_, port, _ := net.SplitHostPort(server.Listener.Addr().String())

	dialer := &net.Dialer{Timeout: 5 * time.Second}
	base := &http.Transport{DialContext: polite.DialResolved(dialer.DialContext)}
	defer base.CloseIdleConnections()
	tr := polite.New(base, polite.WithPacingKeyIP(hostsFile{"site.test": "127.0.0.1"}))
	resp, err := (&http.Client{Transport: tr}).Get("http://site.test:" + port + "/")
	if err != nil {
		fmt.Println(err)
		return
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(string(body[:len(body)-len(port)-1]))
	// Output:
	// this is site.test
}
