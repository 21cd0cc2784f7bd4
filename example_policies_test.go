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
	tr := polite.New(nil, polite.WithPacing(polite.PacingPolicy{BaseDelay: polite.None}), polite.WithPacingKeyIP(resolver))
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
func ExamplePacingPolicy_maxBandwidth() {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		w.Write(make([]byte, 10_500))
	}))
	defer server.Close()

	tr := polite.New(nil, polite.WithPacing(polite.PacingPolicy{BaseDelay: polite.None, MaxBandwidth: 10_000}))
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
