package polite

import (
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

// FuzzCanonicalHost feeds canonicalHost arbitrary strings, and the host
// names that url.Parse finds in them. The seed corpus is in
// testdata/fuzz/FuzzCanonicalHost.
func FuzzCanonicalHost(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		checkCanonicalHost(t, s)
		for _, raw := range []string{s, "http://" + s + "/"} {
			u, err := url.Parse(raw)
			if err != nil {
				continue
			}
			host := u.Hostname()
			got, ok := checkCanonicalHost(t, host)
			if !ok {
				continue
			}
			// The canonical host, written back in a URL, reads back the same.
			w := "http://" + hostForURL(got) + ":80/robots.txt"
			u2, err := url.Parse(w)
			if err != nil {
				t.Fatalf("canonicalHost(%q) = %q; url.Parse(%q): %v", host, got, w, err)
			}
			if u2.Hostname() != got {
				t.Fatalf("canonicalHost(%q) = %q; url.Parse(%q).Hostname() = %q", host, got, w, u2.Hostname())
			}
		}
	})
}

// checkCanonicalHost checks the properties canonicalHost promises for one
// host, and returns its result.
func checkCanonicalHost(t *testing.T, host string) (string, bool) {
	t.Helper()
	got, ok := canonicalHost(host)
	if slow, slowOK := canonicalHostSlow(host); slow != got || slowOK != ok {
		t.Fatalf("canonicalHost(%q) = %q, %v, but the slow path gives %q, %v", host, got, ok, slow, slowOK)
	}
	if !ok {
		if got != "" {
			t.Fatalf("canonicalHost(%q) = %q, false; want \"\" with false", host, got)
		}
		return got, ok
	}
	if got == "" {
		t.Fatalf("canonicalHost(%q) = \"\", true", host)
	}
	if again, againOK := canonicalHost(got); again != got || !againOK {
		t.Fatalf("canonicalHost(%q) = %q, but canonicalHost(%q) = %q, %v", host, got, got, again, againOK)
	}
	cased := got // the part whose ASCII letters must be lower-case
	gotIP, err := netip.ParseAddr(got)
	if err == nil {
		cased = gotIP.WithZone("").String() // a zone keeps its case, and its dots
	} else if strings.HasSuffix(got, ".") {
		t.Fatalf("canonicalHost(%q) = %q, which ends in a dot", host, got)
	}
	if i := strings.IndexFunc(cased, func(r rune) bool { return 'A' <= r && r <= 'Z' }); i >= 0 {
		t.Fatalf("canonicalHost(%q) = %q, which has an upper-case letter", host, got)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if !gotIP.IsValid() || gotIP != ip.Unmap() {
			t.Fatalf("canonicalHost(%q) = %q; want the address %v", host, got, ip.Unmap())
		}
	}
	// ASCII aliases: case and one trailing dot do not matter, except the
	// case of a zone.
	if isASCII(host) && strings.IndexByte(host, '%') < 0 {
		if up, upOK := canonicalHost(strings.ToUpper(host)); up != got || !upOK {
			t.Fatalf("canonicalHost(%q) = %q, but canonicalHost(%q) = %q, %v", host, got, strings.ToUpper(host), up, upOK)
		}
		if !strings.HasSuffix(host, ".") {
			if dot, dotOK := canonicalHost(host + "."); dot != got || !dotOK {
				t.Fatalf("canonicalHost(%q) = %q, but canonicalHost(%q) = %q, %v", host, got, host+".", dot, dotOK)
			}
		}
	}
	return got, ok
}
