package polite

import (
	"net/netip"
	"net/url"
	"strings"

	"golang.org/x/net/idna"
)

// canonicalHost returns the one spelling of host under which the transport
// keys a server, so that the aliases of a server share one robots.txt and
// one pace. host is what [url.URL.Hostname] returns: no brackets, no port.
// ok is false only when host cannot name a server: when it is empty, is the
// root "." or ends in an empty label ("..", "example.com.."). A caller
// should refuse such a request rather than let it pass unchecked.
//
// The canonical form is:
//
//   - For an IP address, the form [netip.Addr.String] gives it: IPv4 in
//     dotted decimal, IPv6 as RFC 5952 §4 asks (lower-case hex, "::" for
//     the longest run of zeros), and an IPv4-mapped IPv6 address as the
//     IPv4 address it maps, which a dial of either reaches: "0:0:0:0:0:0:0:1"
//     is "::1" and "::ffff:127.0.0.1" is "127.0.0.1". The zone of a scoped
//     address ("fe80::1%eth0") is kept as written, case included, and is the
//     only place where a canonical host may have upper-case letters: a zone
//     names a network interface, interface names are case-sensitive, two
//     zones are two links and so two servers, and the robots.txt URL written
//     from the key (see hostForURL) must leave by the request's interface.
//   - For a name with a non-ASCII character, the ASCII form that
//     [idna.Lookup] gives it (UTS #46 mapping, non-transitional, as RFC 5891
//     §5 asks of lookups): "BÜCHER.example", "bücher.example" and
//     "bücher。example" are "xn--bcher-kva.example". net/http converts a
//     host in the same way before it dials, so the key names the server
//     dialled. When the conversion fails (an underscore or a label like
//     "r3---sn-x" beside a non-ASCII label), net/http dials the name as
//     written, and the key is that name with its ASCII letters lower-cased
//     and its other bytes as they are.
//   - For any other name, the name with its ASCII letters lower-cased. Like
//     net/http, canonicalHost does not pass an ASCII name through IDNA,
//     whose rules refuse the underscores ("_dmarc.example.com",
//     "my_host.example") and labels such as "r3---sn-x" that real hosts
//     have: such names are kept.
//
// One trailing dot is removed, after the IDNA conversion (which maps dots
// such as U+3002 to '.'): DNS reads "example.com." and "example.com" alike.
// A zone that ends in a dot keeps it, as it keeps the rest of its text.
// A name that net/netip does not read as an IP address stays a name, as
// net/http and Go's resolver take it: "127.1" and "0177.0.0.1" are not
// rewritten as 127.0.0.1. (A resolver that reads them as addresses, such
// as the C library's, dials them as such; only a check of the address
// dialled, not of the key, can keep a program away from an address.)
//
// An already canonical lower-case ASCII name is returned as it is, without
// allocating: canonicalHost runs on every request.
func canonicalHost(host string) (string, bool) {
	if isLowerASCIIName(host) {
		return host, true
	}
	return canonicalHostSlow(host)
}

// isLowerASCIIName reports whether host is non-empty, made only of
// lower-case ASCII letters, digits, '-' and '.', and does not end in a dot.
// Such a host is its own canonical form.
func isLowerASCIIName(host string) bool {
	if host == "" || host[len(host)-1] == '.' {
		return false
	}
	for i := 0; i < len(host); i++ {
		c := host[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

func canonicalHostSlow(host string) (string, bool) {
	if !isASCII(host) {
		if a, err := idna.Lookup.ToASCII(host); err == nil {
			host = a
		}
	}
	if ip, ok := parseIP(host); ok { // before the dot goes: a zone may end in one
		return ip, true
	}
	// After the conversion, which maps dots such as U+3002 to '.'.
	host, ok := strings.CutSuffix(host, ".")
	if host == "" || ok && strings.HasSuffix(host, ".") {
		return "", false
	}
	if ip, ok := parseIP(host); ok {
		return ip, true
	}
	return lowerASCII(host), true
}

// parseIP returns the canonical form of s when s is an IP address.
func parseIP(s string) (string, bool) {
	if !mayBeIP(s) {
		return "", false
	}
	ip, err := netip.ParseAddr(s)
	if err != nil {
		return "", false
	}
	return ip.Unmap().String(), true
}

// mayBeIP reports whether [netip.ParseAddr] might read s: s has a colon,
// or is made only of digits and dots. It spares names a failed parse and
// its error.
func mayBeIP(s string) bool {
	if strings.IndexByte(s, ':') >= 0 {
		return true
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c != '.' && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// hostForURL writes a canonical host back as the host of a URL's text, so
// that [url.Parse] reads back the same host when a port follows it, as in
// [originKey.String]: an IPv6 address goes in brackets, with the '%' before
// its zone written "%25" (RFC 6874 §2), and a name is escaped as
// [url.URL.String] escapes it ("%" and non-ASCII bytes percent-encoded). A
// name with colons, which url.Parse lets through unless GODEBUG has
// urlstrictcolons=1, is written without brackets, as it came. A
// [url.URL]'s Host field takes the host unescaped instead.
func hostForURL(canonical string) string {
	if strings.IndexByte(canonical, ':') >= 0 {
		if _, err := netip.ParseAddr(canonical); err == nil {
			addr, zone, ok := strings.Cut(canonical, "%")
			if !ok {
				return "[" + canonical + "]"
			}
			// url.Parse takes a zone's non-ASCII bytes raw, and only '%'
			// and ' ' escaped.
			return "[" + addr + "%25" + zoneEscaper.Replace(zone) + "]"
		}
	}
	u := url.URL{Host: canonical}
	return strings.TrimPrefix(u.String(), "//")
}

var zoneEscaper = strings.NewReplacer("%", "%25", " ", "%20")

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// lowerASCII lower-cases the ASCII letters of s and leaves every other byte
// alone: DNS compares names without regard to ASCII case only (RFC 4343),
// so two names that differ in a non-ASCII letter's case are two names.
func lowerASCII(s string) string {
	i := 0
	for i < len(s) && !('A' <= s[i] && s[i] <= 'Z') {
		i++
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	for ; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}
