package sitemap

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"net/url"
	"strings"
	"testing"
)

// readAll reads body, the sitemap at sitemapURL, with r's settings given
// by set, and returns the URLs of its entries, each with " (sitemap)"
// when it names a sitemap, the Reader, and the error that ended it (nil
// for io.EOF).
func readAll(t testing.TB, sitemapURL string, body []byte, set func(*Reader)) ([]Entry, *Reader, error) {
	t.Helper()
	u, err := url.Parse(sitemapURL)
	if err != nil {
		t.Fatal(err)
	}
	r := NewReader(bytes.NewReader(body), u)
	if set != nil {
		set(r)
	}
	var out []Entry
	for {
		e, err := r.Next()
		if err == io.EOF {
			return out, r, nil
		}
		if err != nil {
			var re *ReadError
			if !errors.As(err, &re) {
				t.Fatalf("Next = %v (%T); want a *ReadError", err, err)
			}
			if _, err2 := r.Next(); err2 != err {
				t.Fatalf("Next after %v = %v; want the same error", err, err2)
			}
			return out, r, err
		}
		out = append(out, e)
	}
}

// urls returns the URLs of entries.
func urls(entries []Entry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.URL)
	}
	return out
}

// gz returns b compressed.
func gz(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// urlset returns a <urlset> of the given <url> bodies.
func urlset(entries ...string) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:xhtml="http://www.w3.org/1999/xhtml">` + "\n")
	for _, e := range entries {
		b.WriteString(" <url>" + e + "</url>\n")
	}
	b.WriteString("</urlset>\n")
	return []byte(b.String())
}

// mustParse parses s, which the test wrote.
func mustParse(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}
