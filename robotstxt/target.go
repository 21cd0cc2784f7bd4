package robotstxt

import (
	"net/url"
	"strings"
)

// RequestPath returns the path and query that a server receiving a request
// for u decides it on, which robots.txt rules match: u's escaped path and
// query, as [url.URL.RequestURI] gives them. net/http sends a u whose
// Opaque is set with Opaque as written: one that starts with "//" makes
// the absolute form "scheme://authority/path?query", and the server
// decides on its path ("/" when it has none) and query; one that starts
// with "/" is the path itself. The authority, like u's host, is the
// caller's to match to the file's origin. ok is false for any other
// Opaque, such as "*", which names no path that rules can decide.
func RequestPath(u *url.URL) (path string, ok bool) {
	if u.Opaque == "" {
		return u.RequestURI(), true
	}
	path = u.Opaque
	switch {
	case strings.HasPrefix(path, "//"):
		i := strings.IndexAny(path[2:], "/?")
		switch {
		case i < 0:
			path = "/"
		case path[2+i] == '?':
			path = "/" + path[2+i:]
		default:
			path = path[2+i:]
		}
	case !strings.HasPrefix(path, "/"):
		return "", false
	}
	if u.ForceQuery || u.RawQuery != "" {
		path += "?" + u.RawQuery
	}
	return path, true
}

// isRobotsTxt reports whether path, as RequestPath gives it, is
// /robots.txt, with or without a query.
func isRobotsTxt(path string) bool {
	p, _, _ := strings.Cut(path, "?")
	return p == "/robots.txt"
}
