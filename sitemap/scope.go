package sitemap

import (
	"net/url"
	"path"
	"strings"
)

// A scope is what URLs a sitemap may list (sitemaps.org protocol,
// "Sitemap file location" and "Sitemaps & Cross Submits"): its pages lie
// on its own origin, under its own directory; the sitemaps of an index on
// its origin; and both anywhere on the origin of a robots.txt that named
// it.
type scope struct {
	origin string // the sitemap's origin, as originOf gives it
	dir    string // the escaped path of the sitemap's directory, ending in '/'
	robots string // the origin of the robots.txt that named it, or ""
}

// newScope returns the scope of the sitemap at u, named by the robots.txt
// at robotsURL or by none when it is "".
func newScope(u *url.URL, robotsURL string) scope {
	s := scope{origin: originOf(u), dir: "/"}
	if p := u.EscapedPath(); strings.HasPrefix(p, "/") {
		s.dir = p[:strings.LastIndexByte(p, '/')+1]
	}
	if r, err := url.Parse(robotsURL); err == nil && robotsURL != "" {
		s.robots = originOf(r)
	}
	return s
}

// allows reports whether the sitemap may list u: as a page, or as a
// sitemap when sitemap is true.
func (s scope) allows(u *url.URL, sitemap bool) bool {
	o := originOf(u)
	switch {
	case s.robots != "" && o == s.robots:
		return true
	case o != s.origin:
		return false
	case sitemap:
		return true
	}
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	// Dot segments are resolved as a server would resolve them, so that
	// "/catalog/../private/" is not taken to be under "/catalog/".
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return strings.HasPrefix(c, s.dir)
}

// originOf returns u's scheme and host in lower case, with the port when it
// is not the scheme's default: "https://example.com",
// "http://example.com:8080".
func originOf(u *url.URL) string {
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	switch {
	case scheme == "http" && strings.HasSuffix(host, ":80"):
		host = host[:len(host)-3]
	case scheme == "https" && strings.HasSuffix(host, ":443"):
		host = host[:len(host)-4]
	}
	return scheme + "://" + host
}
