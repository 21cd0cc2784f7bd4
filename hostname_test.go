package polite

import (
	"net/url"
	"testing"
)

func TestCanonicalHost(t *testing.T) {
	tests := []struct {
		name, host string
		want       string
		wantOK     bool
	}{
		{"lower-case name", "example.com", "example.com", true},
		{"upper-case name", "Example.COM", "example.com", true},
		{"trailing dot", "example.com.", "example.com", true},
		{"upper case and trailing dot", "EXAMPLE.com.", "example.com", true},
		{"single label", "localhost", "localhost", true},
		{"empty", "", "", false},
		{"root", ".", "", false},
		{"two dots", "..", "", false},
		{"empty last label", "example.com..", "", false},
		{"empty inner label kept", "a..B", "a..b", true},
		{"ideographic full stop alone", "\u3002", "", false},
		{"leading dot kept", ".example.com", ".example.com", true},

		{"IPv4", "127.0.0.1", "127.0.0.1", true},
		{"IPv4 trailing dot", "127.0.0.1.", "127.0.0.1", true},
		{"IPv6 loopback", "::1", "::1", true},
		{"IPv6 loopback in full", "0:0:0:0:0:0:0:1", "::1", true},
		{"IPv6 upper-case hex", "2001:DB8::A", "2001:db8::a", true},
		{"IPv6 leading zeros", "2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1", true},
		{"IPv6 longest zero run", "2001:db8:0:0:1:0:0:0", "2001:db8:0:0:1::", true},
		{"IPv6 first of equal zero runs", "2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1", true},
		{"IPv6 single zero field", "2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1", true},
		{"IPv4-mapped dotted", "::ffff:127.0.0.1", "127.0.0.1", true},
		{"IPv4-mapped upper case", "::FFFF:127.0.0.1", "127.0.0.1", true},
		{"IPv4-mapped hex", "::ffff:7f00:1", "127.0.0.1", true},
		{"IPv4-mapped in full", "0:0:0:0:0:ffff:7f00:0001", "127.0.0.1", true},
		{"IPv4-mapped with a zone", "::ffff:127.0.0.1%eth0", "127.0.0.1", true},
		{"IPv4-compatible stays IPv6", "::127.0.0.1", "::7f00:1", true},
		{"zone kept", "fe80::1%eth0", "fe80::1%eth0", true},
		{"a zone keeps its trailing dot", "fe80::1%eth0.", "fe80::1%eth0.", true},
		{"zone keeps its case", "FE80::1%ETH0", "fe80::1%ETH0", true},
		{"numeric zone", "fe80:0::1%2", "fe80::1%2", true},
		{"empty zone is no address", "fe80::1%", "fe80::1%", true},
		{"short IPv4 is a name", "127.1", "127.1", true},
		{"octal IPv4 is a name", "0177.0.0.1", "0177.0.0.1", true},
		{"hex IPv4 is a name", "0X7F.0.0.1", "0x7f.0.0.1", true},

		{"Unicode name", "bücher.example", "xn--bcher-kva.example", true},
		{"upper-case Unicode name", "BÜCHER.example", "xn--bcher-kva.example", true},
		{"punycode name", "xn--bcher-kva.example", "xn--bcher-kva.example", true},
		{"upper-case punycode name", "XN--BCHER-KVA.EXAMPLE", "xn--bcher-kva.example", true},
		{"Unicode name with trailing dot", "bücher.example.", "xn--bcher-kva.example", true},
		{"ideographic full stop", "bücher\u3002example", "xn--bcher-kva.example", true},
		{"ideographic full stop last", "example\u3002", "example", true},
		{"full-width letters", "ｅｘａｍｐｌｅ.com", "example.com", true},
		{"full-width IPv4", "１２７．０．０．１", "127.0.0.1", true},
		{"decomposed umlaut", "bu\u0308cher.example", "xn--bcher-kva.example", true},
		{"sharp s is not ss", "straße.de", "xn--strae-oqa.de", true},

		{"underscore", "my_host.example", "my_host.example", true},
		{"underscore upper case", "My_Host.Example", "my_host.example", true},
		{"underscore first", "_dmarc.example.com", "_dmarc.example.com", true},
		{"hyphens in third and fourth place", "r3---sn-apo3qvuoxuxbt-j5pe.googlevideo.com", "r3---sn-apo3qvuoxuxbt-j5pe.googlevideo.com", true},
		{"invalid punycode kept", "XN--ZZ.example", "xn--zz.example", true},
		{"Unicode beside an IDNA-invalid label", "Bücher.R3---sn-x.example", "bücher.r3---sn-x.example", true},
		{"Unicode and underscore", "bü_cher.example", "bü_cher.example", true},
		{"Unicode and underscore: ASCII lowered only", "BÜ_CHER.Example.", "bÜ_cher.example", true},
		{"percent sign", "A%b", "a%b", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := canonicalHost(tc.host)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("canonicalHost(%q) = %q, %v; want %q, %v", tc.host, got, ok, tc.want, tc.wantOK)
			}
			if !ok {
				return
			}
			if again, ok := canonicalHost(got); again != got || !ok {
				t.Errorf("canonicalHost(%q) = %q, %v; want it unchanged", got, again, ok)
			}
		})
	}
}

// TestCanonicalHostAliases checks that the aliases of one server, written
// in URLs, share one key.
func TestCanonicalHostAliases(t *testing.T) {
	groups := []struct {
		want string
		urls []string
	}{
		{"example.com", []string{"http://example.com/", "http://example.com./", "http://EXAMPLE.Com:8080/"}},
		{"::1", []string{"http://[::1]/", "http://[0:0:0:0:0:0:0:1]/", "http://[0000::0001]:80/"}},
		{"127.0.0.1", []string{"http://127.0.0.1/", "http://[::ffff:127.0.0.1]/", "http://[::ffff:7f00:1]/", "http://127.0.0.1./"}},
		{"xn--bcher-kva.example", []string{
			"http://bücher.example/", "http://BÜCHER.example/", "http://xn--bcher-kva.example/",
			"http://b%C3%BCcher.example/", "http://XN--BCHER-KVA.EXAMPLE./",
		}},
	}
	for _, g := range groups {
		for _, raw := range g.urls {
			u, err := url.Parse(raw)
			if err != nil {
				t.Fatalf("url.Parse(%q): %v", raw, err)
			}
			if got, ok := canonicalHost(u.Hostname()); got != g.want || !ok {
				t.Errorf("canonicalHost(%q) from %s = %q, %v; want %q, true", u.Hostname(), raw, got, ok, g.want)
			}
		}
	}
}

func TestCanonicalHostAllocs(t *testing.T) {
	for _, host := range []string{"example.com", "www.example.co.uk", "127.0.0.1", "xn--bcher-kva.example"} {
		var got string
		n := testing.AllocsPerRun(100, func() { got, _ = canonicalHost(host) })
		if n != 0 {
			t.Errorf("canonicalHost(%q) allocates %v times; want 0", host, n)
		}
		if got != host {
			t.Errorf("canonicalHost(%q) = %q; want it unchanged", host, got)
		}
	}
}

func TestHostForURL(t *testing.T) {
	tests := []struct{ canonical, want string }{
		{"example.com", "example.com"},
		{"127.0.0.1", "127.0.0.1"},
		{"::1", "[::1]"},
		{"2001:db8::1", "[2001:db8::1]"},
		{"fe80::1%eth0", "[fe80::1%25eth0]"},
		{"fe80::1%en 0", "[fe80::1%25en%200]"},
		{"fe80::1%a%b", "[fe80::1%25a%25b]"},
		{"fe80::1%é", "[fe80::1%25é]"},
		{"my_host.example", "my_host.example"},
		{"bü_cher.example", "b%C3%BC_cher.example"},
		{"a%b", "a%25b"},
	}
	for _, tc := range tests {
		got := hostForURL(tc.canonical)
		if got != tc.want {
			t.Errorf("hostForURL(%q) = %q; want %q", tc.canonical, got, tc.want)
		}
		u, err := url.Parse("http://" + got + ":80/robots.txt")
		if err != nil {
			t.Errorf("url.Parse of hostForURL(%q): %v", tc.canonical, err)
			continue
		}
		if u.Hostname() != tc.canonical {
			t.Errorf("url.Parse(%q).Hostname() = %q; want %q", "http://"+got+":80/robots.txt", u.Hostname(), tc.canonical)
		}
	}
}

func BenchmarkCanonicalHost(b *testing.B) {
	for _, host := range []string{"www.example.com", "WWW.Example.com.", "::ffff:127.0.0.1", "bücher.example"} {
		b.Run(host, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				canonicalHost(host)
			}
		})
	}
}

// TestSplitHostPort checks that splitHostPort splits a Host as
// url.URL's Hostname and Port do.
func TestSplitHostPort(t *testing.T) {
	for _, h := range []string{"", "a", "a:", "a:80", "a:8x", "[::1]", "[::1]:443", "[::1]:", "[::1]x", "::1", "a:b:80",
		"[a]:1:2", "[", "]", "[]", "[]:1", ":", ":80", "xn--caf-dma.example:8080", "a.b.", "[fe80::1%25en0]:80"} {
		u := &url.URL{Host: h}
		host, port := splitHostPort(h)
		if host != u.Hostname() || port != u.Port() {
			t.Errorf("splitHostPort(%q) = %q, %q; want %q, %q", h, host, port, u.Hostname(), u.Port())
		}
	}
}

func FuzzSplitHostPort(f *testing.F) {
	for _, h := range []string{"a:80", "[::1]:443", "[::1]", "a:"} {
		f.Add(h)
	}
	f.Fuzz(func(t *testing.T, h string) {
		u := &url.URL{Host: h}
		if host, port := splitHostPort(h); host != u.Hostname() || port != u.Port() {
			t.Errorf("splitHostPort(%q) = %q, %q; want %q, %q", h, host, port, u.Hostname(), u.Port())
		}
	})
}
