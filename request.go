package polite

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unsafe"

	"golang.org/x/net/publicsuffix"

	"github.com/polite-go/polite/pace"
	"github.com/polite-go/polite/robotstxt"
)

// A target is who sends a request and where it goes: what the robots.txt
// and pacing sides need to know of a request, worked out once, before
// either of them runs.
type target struct {
	origin     originKey   // whose robots.txt applies
	pacingKey  string      // whose pace
	partition  string      // whose rate-limit quota, within the pacing key: WithQuotaPartition's
	dial       *dialTarget // with the IP key, the address that pacingKey names, which the dial goes to; else nil
	bandwidth  int64       // the bytes a second that pacingKey's policy lets its bodies be read at; 0: no cap, or none asked
	mode       RobotsMode  // what robots.txt does to the request
	token      string      // product token that chooses the robots.txt group
	addUA      bool        // the transport sets its User-Agent, on a copy of the request
	robotsPath bool        // the request is for /robots.txt itself, which is always allowed
}

// errNilURL is the error for a request without a URL.
var errNilURL = errors.New("polite: nil Request.URL")

// targetOf fills tg, a zero target, with req's target, and returns
// ok=false when req's URL is not an http or https URL. An http or https
// URL whose host names no server is an error. req.URL must not be nil. It
// fills tg in place, as RoundTrip would otherwise copy the target it
// returned on every request.
func (t *PoliteTransport) targetOf(req *http.Request, tg *target) (ok bool, err error) {
	tg.origin, ok = originOf(req.URL)
	if !ok {
		return false, nil
	}
	if tg.origin.host == "" {
		return true, fmt.Errorf("polite: %q names no host", req.URL.Host)
	}
	tg.pacingKey = tg.origin.host // PacingKeyHost's, without working it out again
	switch {
	case t.ips != nil:
		tg.pacingKey, tg.dial, err = t.ips.key(req.Context(), tg.origin.host)
		if err != nil {
			return true, err
		}
	case t.pacingKey != nil:
		if k := t.pacingKey(req.URL); k != "" {
			tg.pacingKey = k
		}
	}
	if t.checkPolicy || t.bandwidth != nil {
		// WithPacingFunc's policy may be invalid, and a cap is applied to
		// the body; rules alone are for the Pacer, which asks itself.
		p, err := t.pacing.For(tg.pacingKey)
		if err != nil {
			return true, keyPolicyError(tg.pacingKey, err)
		}
		tg.bandwidth = pace.Value(p.MaxBandwidth)
	}
	if t.quotaPartition != nil {
		tg.partition = t.quotaPartition(req)
	}
	tg.mode = t.robotsModeOf(req, tg.origin.host)
	if req.URL.Opaque != "" && tg.mode != RobotsOff {
		if err := checkOpaque(req.URL, tg.origin); err != nil {
			return true, err
		}
	}
	tg.token, tg.addUA = t.agentOf(req.Header)
	tg.robotsPath = isRobotsPath(req.URL)
	return true, nil
}

// checkOpaque returns an error when u, whose Opaque is set, asks for what
// robots.txt cannot decide: a request-target that names no path, or an
// absolute one that names another origin than k, u's, whose server would
// serve it as that origin's (RFC 9112 §3.2.2).
func checkOpaque(u *url.URL, k originKey) error {
	if _, ok := robotstxt.RequestPath(u); !ok {
		return fmt.Errorf("polite: %q: the request-target names no path that robots.txt can decide", u)
	}
	if !strings.HasPrefix(u.Opaque, "//") {
		return nil
	}
	abs, err := url.Parse(u.Scheme + ":" + u.Opaque)
	if err != nil {
		return fmt.Errorf("polite: %q: the request-target: %w", u, err)
	}
	if named, _ := originOf(abs); named != k {
		return fmt.Errorf("polite: %q: the request-target names %s, not the URL's origin %s", u, named, k)
	}
	return nil
}

// requestPath is robotstxt.RequestPath, but that the path and query of a
// URL with a query are written in b's room, so that a decision on them
// allocates nothing when they fit: the string shares b's array. Escape
// analysis keeps the array on the caller's stack only while nothing keeps
// the string past the call that decides it, and moves it to the heap
// otherwise, so the string is never read after its room is reused.
func requestPath(u *url.URL, b []byte) (string, bool) {
	if u.Opaque != "" || !u.ForceQuery && u.RawQuery == "" {
		return robotstxt.RequestPath(u) // no query: the escaped path, as the URL holds it
	}
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	b = append(append(append(b, p...), '?'), u.RawQuery...)
	return unsafe.String(unsafe.SliceData(b), len(b)), true
}

// queryTarget returns the target of req for op, a query that sends
// nothing: Check or Ready. Unlike RoundTrip, which passes such requests
// on, it fails for a URL that is not http or https.
func (t *PoliteTransport) queryTarget(op string, req *http.Request) (target, error) {
	if req.URL == nil {
		return target{}, errNilURL
	}
	var tg target
	ok, err := t.targetOf(req, &tg)
	if !ok {
		return target{}, fmt.Errorf("polite: %s %q: not an http or https URL", op, req.URL)
	}
	return tg, err
}

// agentOf returns the product token that chooses the robots.txt group for
// a request with header h, and whether the transport adds its User-Agent.
// A request that has a User-Agent header, even an empty one, keeps it.
func (t *PoliteTransport) agentOf(h http.Header) (token string, addUA bool) {
	ua, ok := h["User-Agent"]
	switch {
	case !ok:
		return t.defaultToken, t.userAgent != ""
	case len(ua) > 0 && ua[0] == t.userAgent:
		return t.defaultToken, false
	case len(ua) > 0:
		return robotstxt.ProductToken(ua[0]), false
	}
	return "", false
}

// goUserAgent is the product token net/http sends when a request has no
// User-Agent.
const goUserAgent = "go-http-client"

// originKey names one robots.txt: RFC 9309 scopes a file to a scheme, host
// and port. The host is canonical (hostname.go) and the port explicit, so
// "http://Example.com./" and "http://example.com:80/" share a key.
type originKey struct {
	scheme, host, port string
}

// originOf returns u's origin key, and ok=false when u is not an http or
// https URL. The key's host is "" when u's names no server.
func originOf(u *url.URL) (k originKey, ok bool) {
	switch {
	case u.Scheme == "http" || strings.EqualFold(u.Scheme, "http"):
		k.scheme = "http"
	case u.Scheme == "https" || strings.EqualFold(u.Scheme, "https"):
		k.scheme = "https"
	default:
		return k, false
	}
	host, port := splitHostPort(u.Host)
	k.host, _ = canonicalHost(host)
	k.port = port
	if port == "" {
		k.port = defaultPort(k.scheme)
	}
	return k, true
}

// String returns "scheme://host:port", with IPv6 hosts in brackets.
func (k originKey) String() string {
	return k.scheme + "://" + hostForURL(k.host) + ":" + k.port
}

// fetchURL returns the URL of k's robots.txt as a browser writes it, the
// default port left out, so that the request's Host header is the one the
// origin's pages carry: a virtual host that matches it exactly answers.
func (k originKey) fetchURL() string {
	host := hostForURL(k.host)
	if k.port != defaultPort(k.scheme) {
		host += ":" + k.port
	}
	return k.scheme + "://" + host + "/robots.txt"
}

func defaultPort(scheme string) string {
	if scheme == "https" {
		return "443"
	}
	return "80"
}

// hostKey returns u's host in canonical form (hostname.go), or "" when it
// names no server: the host of its originKey and its pacing key.
func hostKey(u *url.URL) string {
	host, _ := splitHostPort(u.Host)
	h, _ := canonicalHost(host)
	return h
}

// splitHostPort splits a URL's Host into the host and the port, as
// [url.URL.Hostname] and [url.URL.Port] do, in one pass: originOf runs on
// every request, and each of those two splits the Host again.
func splitHostPort(hostport string) (host, port string) {
	host = hostport
	if i := strings.LastIndexByte(host, ':'); i >= 0 && digits(host[i+1:]) {
		host, port = host[:i], host[i+1:]
	}
	if len(host) >= 2 && host[0] == '[' && host[len(host)-1] == ']' {
		host = host[1 : len(host)-1]
	}
	return host, port
}

// digits reports whether s is made of ASCII digits only, or empty.
func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isRobotsPath reports whether the path a server receives for u is
// "/robots.txt". Without an Opaque, only a URL whose Path is "/robots.txt"
// can have that escaped path, so the others are told apart here, without
// escaping theirs.
func isRobotsPath(u *url.URL) bool {
	return (u.Opaque != "" || u.Path == "/robots.txt") && requestsRobots(u)
}

// requestsRobots is isRobotsPath for a u with an Opaque, or whose Path is
// "/robots.txt".
func requestsRobots(u *url.URL) bool {
	if u.Opaque != "" {
		p, _ := robotstxt.RequestPath(u)
		p, _, _ = strings.Cut(p, "?")
		return p == "/robots.txt"
	}
	return u.EscapedPath() == "/robots.txt"
}

// PacingKeyHost is the default pacing key (see [WithPacingKey]): u's host name in canonical
// form (lower-cased, one trailing dot dropped, IP literals in one
// spelling, international names in their ASCII form), whatever the
// scheme and port. A fleet of processes that partitions its URLs by this
// key needs no shared pacing state.
func PacingKeyHost(u *url.URL) string { return hostKey(u) }

// PacingKeyOrigin is a pacing key (see [WithPacingKey]) that paces each origin apart:
// "scheme://host:port", with the host as [PacingKeyHost] gives it and the
// port explicit.
func PacingKeyOrigin(u *url.URL) string {
	k, _ := originOf(u)
	return k.String()
}

// PacingKeyDomain is a pacing key (see [WithPacingKey]) that paces each registrable domain
// apart, its subdomains with it: the host's public suffix, by the Public
// Suffix List of golang.org/x/net/publicsuffix (its private section too),
// and one label more, so that "www.example.co.uk" and "shop.example.co.uk"
// share "example.co.uk", while "a.github.io" and "b.github.io", whose
// suffix github.io is, are two keys. A host that is an IP address, or a
// public suffix itself ("localhost", "co.uk"), is its own key.
func PacingKeyDomain(u *url.URL) string {
	h := hostKey(u)
	if mayBeIP(h) {
		return h // an IP address, or a name that no domain can have
	}
	if d, err := publicsuffix.EffectiveTLDPlusOne(h); err == nil {
		return d
	}
	return h
}

// originPacingKey returns the key that t paces requests to origin k by,
// without looking anything up: with the IP key, the address in its cache,
// or the host name when there is none.
func (t *PoliteTransport) originPacingKey(k originKey) string {
	switch {
	case t.ips != nil:
		if key, ok := t.ips.peek(k.host); ok {
			return key
		}
		return k.host
	case t.pacingKey == nil:
		return k.host // PacingKeyHost's
	}
	return t.PacingKey(k.url())
}

// url returns a URL of k's origin, with the port explicit.
func (k originKey) url() *url.URL {
	return &url.URL{Scheme: k.scheme, Host: hostForURL(k.host) + ":" + k.port}
}

// PacingKey returns the key that t paces requests to u by, an http or
// https URL: a fleet that partitions its URLs by it shares no pacing state.
// With [WithPacingKeyIP] it looks the host up when its address is not
// cached, and returns "" when that fails; [PoliteTransport.PacingKeyContext]
// says why.
func (t *PoliteTransport) PacingKey(u *url.URL) string {
	k, _ := t.PacingKeyContext(context.Background(), u)
	return k
}

// PacingKeyContext is [PoliteTransport.PacingKey] within ctx: with
// [WithPacingKeyIP], a lookup that fails is a [*ResolveError], and one
// that ctx ends is ctx's error, as RoundTrip would return them. With the
// other keys it never fails.
func (t *PoliteTransport) PacingKeyContext(ctx context.Context, u *url.URL) (string, error) {
	k, _, err := t.pacingKeyOf(ctx, u)
	return k, err
}

// pacingKeyOf is PacingKeyContext, with the IP key's dial target.
func (t *PoliteTransport) pacingKeyOf(ctx context.Context, u *url.URL) (string, *dialTarget, error) {
	switch {
	case t.ips != nil:
		h := hostKey(u)
		if h == "" {
			return "", nil, fmt.Errorf("polite: %q names no host", u.Host)
		}
		return t.ips.key(ctx, h)
	case t.pacingKey != nil:
		if k := t.pacingKey(u); k != "" {
			return k, nil, nil
		}
	}
	return hostKey(u), nil, nil
}
