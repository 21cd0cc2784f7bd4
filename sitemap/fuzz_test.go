package sitemap

import (
	"bytes"
	"errors"
	"io"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// FuzzReader reads any bytes as a sitemap, and checks that the Reader
// ends, with io.EOF or one of its sentinels, within its limits; that every
// URL it yields is an absolute http(s) URL in the sitemap's scope, at most
// 2,048 bytes long, with no fragment; and that the same bytes gzipped read
// alike.
func FuzzReader(f *testing.F) {
	f.Add(urlset("<loc>https://example.com/dir/a</loc><lastmod>2005-01-01</lastmod>",
		`<loc>https://example.com/dir/b</loc><xhtml:link rel="alternate" hreflang="de" href="https://example.com/dir/de/"/>`))
	f.Add([]byte(`<sitemapindex><sitemap><loc>https://example.com/s.xml</loc></sitemap></sitemapindex>`))
	f.Add([]byte(`<rss><channel><item><link>a</link><pubDate>Thu, 05 Jan 2017 12:34:50 GMT</pubDate></item></channel></rss>`))
	f.Add([]byte(`<feed><entry><link href="https://example.com/dir/e"/><updated>2003-12-13T18:30:02Z</updated></entry></feed>`))
	f.Add([]byte("https://example.com/dir/1\nhttps://example.com/dir/2\n"))
	f.Add(gz([]byte("https://example.com/dir/1\n")))
	const at = "https://example.com/dir/sitemap.xml"
	base, _ := url.Parse(at)
	f.Fuzz(func(t *testing.T, data []byte) {
		read := func(body []byte) ([]Entry, error) {
			r := NewReader(bytes.NewReader(body), base)
			r.Limits = Limits{MaxURLs: 200, MaxBytes: 1 << 20}
			var out []Entry
			for {
				e, err := r.Next()
				if err != nil {
					if len(r.Skipped()) > 100 || r.NumSkipped() < len(r.Skipped()) {
						t.Fatalf("Skipped has %d, NumSkipped %d", len(r.Skipped()), r.NumSkipped())
					}
					return out, err
				}
				out = append(out, e)
				if len(out) > 200 {
					t.Fatalf("%d entries past MaxURLs 200", len(out))
				}
				checkURL(t, base, e.URL, e.Sitemap)
				for _, a := range e.Alternates {
					checkURL(t, base, a.URL, false)
				}
			}
		}
		got, err := read(data)
		var re *ReadError
		if err != io.EOF && !(errors.As(err, &re) && isSentinel(re.Err)) {
			t.Fatalf("Next = %v; want io.EOF or a *ReadError of a sentinel", err)
		}
		if bytes.HasPrefix(data, gzipMagic) || len(data) > 64<<10 {
			return
		}
		zipped, zerr := read(gz(data))
		if !slices.EqualFunc(got, zipped, func(a, b Entry) bool {
			return a.URL == b.URL && a.LastMod.Equal(b.LastMod) && a.Sitemap == b.Sitemap && slices.Equal(a.Alternates, b.Alternates)
		}) || (err == io.EOF) != (zerr == io.EOF) {
			t.Fatalf("read %d entries, %v; gzipped, %d, %v", len(got), err, len(zipped), zerr)
		}
	})
}

// checkURL fails t unless s, a URL read from the sitemap at base, is one
// that the Reader may yield.
func checkURL(t *testing.T, base *url.URL, s string, sitemap bool) {
	t.Helper()
	u, err := url.Parse(s)
	switch {
	case err != nil:
		t.Fatalf("yielded %q: %v", s, err)
	case u.Scheme != "http" && u.Scheme != "https" && !strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https"),
		u.Host == "", u.Fragment != "", strings.Contains(s, "#"), len(s) > maxURLLength:
		t.Fatalf("yielded %q: not an absolute http(s) URL of at most 2,048 bytes with no fragment", s)
	case !newScope(base, "").allows(u, sitemap):
		t.Fatalf("yielded %q: out of the scope of %s", s, base)
	}
}
