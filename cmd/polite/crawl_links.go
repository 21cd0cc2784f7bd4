package main

import (
	"io"
	"mime"
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// isHTML reports whether a Content-Type names an HTML document.
func isHTML(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "text/html" || mt == "application/xhtml+xml")
}

// extractLinks returns the links of the HTML document r, fetched from
// docURL: the href of every anchor (<a>) and of every <link rel=canonical>,
// resolved against the document's base URL (its first <base href>, else
// docURL), without fragments, http and https only, each once, in document
// order. Images, scripts and other embedded resources are not links.
func extractLinks(r io.Reader, docURL *url.URL) []string {
	var hrefs []string
	base := docURL
	baseSeen := false
	z := html.NewTokenizer(r)
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break // io.EOF, or a read error: keep what was found
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		name, hasAttr := z.TagName()
		if !hasAttr {
			continue
		}
		var href, rel string
		hasHref := false
		for {
			key, val, more := z.TagAttr()
			switch string(key) {
			case "href":
				href, hasHref = string(val), true
			case "rel":
				rel = string(val)
			}
			if !more {
				break
			}
		}
		if !hasHref {
			continue
		}
		switch atom.Lookup(name) {
		case atom.A:
			hrefs = append(hrefs, href)
		case atom.Link:
			if hasToken(rel, "canonical") {
				hrefs = append(hrefs, href)
			}
		case atom.Base:
			if !baseSeen { // only the first <base href> counts
				baseSeen = true
				if u, err := docURL.Parse(strings.TrimSpace(href)); err == nil {
					base = u
				}
			}
		}
	}

	links := make([]string, 0, len(hrefs))
	seen := make(map[string]bool, len(hrefs))
	for _, h := range hrefs {
		u, ok := resolve(base, h)
		if !ok || seen[u] {
			continue
		}
		seen[u] = true
		links = append(links, u)
	}
	return links
}

// resolve resolves href against base and returns it without its fragment,
// with scheme and host lower-cased; ok is false for anything but an http or
// https URL with a host.
func resolve(base *url.URL, href string) (string, bool) {
	u, err := base.Parse(strings.TrimSpace(href))
	if err != nil {
		return "", false
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", false
	}
	u.Host = strings.ToLower(u.Host)
	u.Fragment, u.RawFragment = "", ""
	return u.String(), true
}

// hasToken reports whether the space-separated list s holds token, without
// regard to case, as HTML's rel attribute is read.
func hasToken(s, token string) bool {
	for _, f := range strings.Fields(s) {
		if strings.EqualFold(f, token) {
			return true
		}
	}
	return false
}
