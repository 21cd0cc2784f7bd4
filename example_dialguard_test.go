package polite_test

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"syscall"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/pace"
)

// This file is a recipe, not part of the package's API: copy it and adjust
// nonPublic to your network.

// errForbiddenAddress is the error of a dial that the guard refused.
var errForbiddenAddress = errors.New("dial guard: address is not public")

// nonPublic lists the special-purpose ranges of the IANA IPv4 and IPv6
// Special-Purpose Address Registries (RFC 6890) that net/netip's
// predicates do not already exclude.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT (RFC 6598)
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved
	netip.MustParsePrefix("::/96"),           // IPv4-compatible (deprecated)
	netip.MustParsePrefix("64:ff9b::/96"),    // NAT64, which may embed a private IPv4 address (RFC 6052)
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64 (RFC 8215)
	netip.MustParsePrefix("100::/64"),        // discard-only (RFC 6666)
	netip.MustParsePrefix("2001::/23"),       // IETF protocol assignments, Teredo included
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("2002::/16"),       // 6to4, which embeds an IPv4 address
	netip.MustParsePrefix("fec0::/10"),       // site-local (deprecated)
}

// isPublic reports whether ip is a global unicast address: not loopback,
// link-local, multicast, unspecified, private (RFC 1918, RFC 4193) or in
// nonPublic. An IPv4-mapped IPv6 address is judged as its IPv4 address.
func isPublic(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsGlobalUnicast() || ip.IsPrivate() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// dialGuard returns a [net.Dialer] Control function that refuses every
// connection that allowed does not accept, with an error that matches
// errForbiddenAddress. Control sees the address actually dialled, after DNS
// resolution, for every connection: the robots.txt fetch and the redirects
// it follows as much as each request. So a name that resolves, or is
// rebound between two lookups, to a private address is refused too.
func dialGuard(allowed func(netip.AddrPort) bool) func(network, address string, _ syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil || !allowed(ap) {
			return fmt.Errorf("%w: %s", errForbiddenAddress, address)
		}
		return nil
	}
}

// guardedTransport returns an [http.Transport] whose connections all pass
// allowed. It has no Proxy: through a proxy, the guard would see the
// proxy's address, and the proxy would connect wherever the URL says.
func guardedTransport(allowed func(netip.AddrPort) bool) *http.Transport {
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: dialGuard(allowed)}
	return &http.Transport{
		DialContext:         dialer.DialContext,
		ForceAttemptHTTP2:   true, // a custom DialContext turns HTTP/2 off otherwise
		MaxIdleConns:        100,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
	}
}

// publicOnly accepts the addresses of the public Internet.
func publicOnly(ap netip.AddrPort) bool { return isPublic(ap.Addr()) }

// A program that fetches URLs its users supply must keep every connection,
// robots.txt fetches and their redirects included, away from loopback,
// private, link-local and other non-public addresses. A guard on the base
// transport's dialer does it: the request to a server on 127.0.0.1 fails
// before any connection is made, with an error the program can detect.
func Example_dialGuard() {
	guard := dialGuard(publicOnly)
	for _, addr := range []string{
		"127.0.0.1:80", "10.0.0.8:443", "169.254.169.254:80", "[::1]:80",
		"[::ffff:192.168.1.1]:80", "[fe80::1%eth0]:80", "[64:ff9b::a00:1]:443",
		"1.1.1.1:443", "[2606:4700:4700::1111]:443",
	} {
		verdict := "allowed"
		if err := guard("tcp", addr, nil); errors.Is(err, errForbiddenAddress) {
			verdict = "refused"
		}
		fmt.Println(addr, verdict)
	}

	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "hello")
	}))
	defer site.Close()

	client := &http.Client{Transport: polite.New(guardedTransport(publicOnly),
		polite.WithUserAgent("ExampleBot/1.0 (+https://example.com/bot)"),
		polite.WithPacing(pace.Policy{BaseDelay: 50 * time.Millisecond}), // short for the example; the default is 1s
	)}
	_, err := client.Get(site.URL + "/")
	fmt.Println("request to the local server refused:", errors.Is(err, errForbiddenAddress))
	// Output:
	// 127.0.0.1:80 refused
	// 10.0.0.8:443 refused
	// 169.254.169.254:80 refused
	// [::1]:80 refused
	// [::ffff:192.168.1.1]:80 refused
	// [fe80::1%eth0]:80 refused
	// [64:ff9b::a00:1]:443 refused
	// 1.1.1.1:443 allowed
	// [2606:4700:4700::1111]:443 allowed
	// request to the local server refused: true
}
