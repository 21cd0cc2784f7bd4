package sitemap

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestReaderFormats(t *testing.T) {
	const base = "https://example.com/sitemap.xml"
	tests := []struct {
		name   string
		body   string
		format Format
		want   []string // URLs, a sitemap's marked with a trailing " (sitemap)"
	}{
		{"urlset", string(urlset("<loc>https://example.com/a</loc>", "<loc> https://example.com/b </loc>")),
			URLSet, []string{"https://example.com/a", "https://example.com/b"}},
		{"index", `<sitemapindex><sitemap><loc>https://example.com/s1.xml</loc></sitemap>
			<sitemap><loc>https://example.com/s2.xml.gz</loc></sitemap></sitemapindex>`,
			Index, []string{"https://example.com/s1.xml (sitemap)", "https://example.com/s2.xml.gz (sitemap)"}},
		{"index with a URL right inside <sitemap>", `<sitemapindex><sitemap> https://example.com/s1.xml </sitemap></sitemapindex>`,
			Index, []string{"https://example.com/s1.xml (sitemap)"}},
		{"rss 2.0", `<rss version="2.0"><channel><link>https://example.com/</link>
			<item><link>https://example.com/post/1</link></item>
			<item><guid isPermaLink="false">https://example.com/guid</guid></item>
			<item><guid>7bd204c6-1655</guid></item>
			<item><atom:link href="https://example.com/no"/><link>/post/2</link></item>
			</channel></rss>`,
			RSS, []string{"https://example.com/post/1", "https://example.com/guid", "https://example.com/post/2"}},
		{"rss 1.0", `<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/">
			<channel><link>https://example.com/</link></channel>
			<item><link>https://example.com/a</link></item></rdf:RDF>`,
			RSS, []string{"https://example.com/a"}},
		{"atom", `<feed xmlns="http://www.w3.org/2005/Atom"><link href="https://example.com/" rel="self"/>
			<entry><link rel="edit" href="https://example.com/edit"/><link href="https://example.com/e1"/><link href="https://example.com/e1.html"/></entry>
			<entry><link rel="alternate" href="e2"/></entry>
			<entry><link rel="edit" href="https://example.com/edit"/></entry></feed>`,
			Atom, []string{"https://example.com/e1", "https://example.com/e2"}},
		{"text", "https://example.com/1\r\n\n  https://example.com/2  \nhttps://example.com/3",
			Text, []string{"https://example.com/1", "https://example.com/2", "https://example.com/3"}},
		{"byte order mark and white space before the XML", "\ufeff\n \t\r\n" + string(urlset("<loc>https://example.com/a</loc>")),
			URLSet, []string{"https://example.com/a"}},
		{"byte order mark before text", "\ufeffhttps://example.com/a\n",
			Text, []string{"https://example.com/a"}},
		{"CDATA, entities and an unescaped &", string(urlset(
			"<loc>https://example.com/q?a=1&amp;b=2</loc>",
			"<loc>https://example.com/<![CDATA[q?c=3&d=4]]></loc>",
			"<loc>https://example.com/q?e=5&f=6</loc>",
			"<loc>https://example.com/&#x7e;x</loc>")),
			URLSet, []string{"https://example.com/q?a=1&b=2", "https://example.com/q?c=3&d=4",
				"https://example.com/q?e=5&f=6", "https://example.com/~x"}},
		{"another name space, or none", `<urlset xmlns="http://www.google.com/schemas/sitemap/0.84">
			<url xmlns=""><loc>https://example.com/a</loc></url><sm:url xmlns:sm="x"><sm:loc>https://example.com/b</sm:loc></sm:url></urlset>`,
			URLSet, []string{"https://example.com/a", "https://example.com/b"}},
		{"a second <loc> starts an entry", `<sitemapindex><sitemap><loc>https://example.com/1.xml</loc>
			<loc>https://example.com/2.xml</loc></sitemap></sitemapindex>`,
			Index, []string{"https://example.com/1.xml (sitemap)", "https://example.com/2.xml (sitemap)"}},
		{"an unclosed <url>", `<urlset><url><loc>https://example.com/1</loc><url><loc>https://example.com/2</loc></url></urlset>`,
			URLSet, []string{"https://example.com/1", "https://example.com/2"}},
		{"markup inside <loc>", `<urlset><url><loc><url><![CDATA[https://example.com/a]]></url></loc></url></urlset>`,
			URLSet, []string{"https://example.com/a"}},
		{"image:loc is not the page's", string(urlset(`<loc>https://example.com/p</loc><image:image><image:loc>https://example.com/i.jpg</image:loc></image:image>`)),
			URLSet, []string{"https://example.com/p"}},
		{"a fragment is dropped", string(urlset("<loc>https://example.com/a#top</loc>")),
			URLSet, []string{"https://example.com/a"}},
		{"after the root, nothing is read", string(urlset("<loc>https://example.com/a</loc>")) + "<urlset><url><loc>https://example.com/b</loc></url></urlset>",
			URLSet, []string{"https://example.com/a"}},
		{"ISO-8859-1", "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><urlset><url><loc>https://example.com/caf\xe9</loc></url></urlset>",
			URLSet, []string{"https://example.com/café"}},
		{"an empty urlset", `<urlset></urlset>`, URLSet, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, zip := range []bool{false, true} {
				body := []byte(tt.body)
				if zip {
					body = gz(body)
				}
				got, r, err := readAll(t, base, body, nil)
				if err != nil {
					t.Fatalf("gzip %v: %v", zip, err)
				}
				var gotURLs []string
				for _, e := range got {
					s := e.URL
					if e.Sitemap {
						s += " (sitemap)"
					}
					gotURLs = append(gotURLs, s)
				}
				if !slices.Equal(gotURLs, tt.want) || r.Format() != tt.format {
					t.Errorf("gzip %v: read %q as %s; want %q as %s (skipped %v)", zip, gotURLs, r.Format(), tt.want, tt.format, r.Skipped())
				}
			}
		})
	}
}

func TestReaderFields(t *testing.T) {
	body := urlset(`<loc>https://example.com/en/</loc><lastmod>2004-12-23T18:00:15+01:00</lastmod>
		<changefreq>weekly</changefreq><priority>0.5</priority>
		<xhtml:link rel="alternate" hreflang="de" href="https://example.com/de/"/>
		<xhtml:link rel="alternate" hreflang="x-default" href=" https://example.com/ "/>
		<xhtml:link rel="alternate" hreflang="fr"/>
		<xhtml:link rel="canonical" href="https://example.com/en"/>
		<xhtml:link rel="alternate" hreflang="it" href="https://other.example/it/"/>`,
		`<loc>https://example.com/2</loc><lastmod>yesterday</lastmod>`)
	got, r, err := readAll(t, "https://example.com/sitemap.xml", body, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{URL: "https://example.com/en/", LastMod: time.Date(2004, 12, 23, 17, 0, 15, 0, time.UTC),
			Alternates: []Alternate{{"de", "https://example.com/de/"}, {"x-default", "https://example.com/"}}},
		{URL: "https://example.com/2"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("read %+v\nwant %+v", got, want)
	}
	wantSkips := []Skip{{Line: 9, Text: "https://other.example/it/", Reason: "alternate: out of scope"}}
	if !slices.Equal(r.Skipped(), wantSkips) {
		t.Errorf("Skipped = %+v; want %+v", r.Skipped(), wantSkips)
	}
}

func TestReaderSkips(t *testing.T) {
	long := "https://example.com/" + strings.Repeat("a", 2100)
	tests := []struct {
		name string
		body string
		want []string
		skip []Skip
	}{
		{"not absolute", string(urlset("<loc>/relative</loc>", "<loc>example.com/no-scheme</loc>", "<loc>ftp://example.com/f</loc>",
			"<loc>https://example.com/ok</loc>", "<loc>https://exa mple.com/bad</loc>")),
			[]string{"https://example.com/ok"},
			[]Skip{{3, "/relative", "not an absolute http(s) URL"}, {4, "example.com/no-scheme", "not an absolute http(s) URL"},
				{5, "ftp://example.com/f", "not an absolute http(s) URL"}, {7, "https://exa mple.com/bad", "not an absolute http(s) URL"}}},
		{"empty", string(urlset("<loc></loc>", "<loc> </loc><lastmod>2005-01-01</lastmod>", "<loc>https://example.com/ok</loc>")),
			[]string{"https://example.com/ok"},
			[]Skip{{3, "", "no URL"}, {4, "", "no URL"}}},
		{"too long", string(urlset("<loc>"+long+"</loc>", "<loc>"+long+long+long+long+"</loc>", "<loc>https://example.com/ok</loc>")),
			[]string{"https://example.com/ok"},
			[]Skip{{3, long[:120], "URL longer than 2,048 bytes"}, {4, long[:120], "URL longer than 2,048 bytes"}}},
		{"stray end tag", `<urlset><url><loc>https://example.com/a</loc></url></url><url><loc>https://example.com/b</loc></url></urlset>`,
			[]string{"https://example.com/a", "https://example.com/b"},
			[]Skip{{1, "</url>", "end tag with no start tag"}}},
		{"text", "https://example.com/a\nnot a url\n\n" + strings.Repeat("x", 9000) + "\nhttps://example.com/b",
			[]string{"https://example.com/a", "https://example.com/b"},
			[]Skip{{2, "not a url", "not an absolute http(s) URL"}, {4, strings.Repeat("x", 120), "line longer than 8 KiB"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, r, err := readAll(t, "https://example.com/sitemap.xml", []byte(tt.body), nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(urls(got), tt.want) {
				t.Errorf("read %q; want %q", urls(got), tt.want)
			}
			if !slices.Equal(r.Skipped(), tt.skip) || r.NumSkipped() != len(tt.skip) {
				t.Errorf("Skipped = %+v (%d); want %+v", r.Skipped(), r.NumSkipped(), tt.skip)
			}
		})
	}
}

func TestReaderSkippedIsBounded(t *testing.T) {
	var b bytes.Buffer
	for i := range 1000 {
		fmt.Fprintf(&b, "bad %d\n", i)
	}
	b.WriteString("https://example.com/ok\n")
	got, r, err := readAll(t, "https://example.com/s.txt", b.Bytes(), nil)
	if err != nil || len(got) != 1 {
		t.Fatalf("read %d entries, %v; want 1, nil", len(got), err)
	}
	if len(r.Skipped()) != 100 || r.NumSkipped() != 1000 || r.Skipped()[99].Text != "bad 99" {
		t.Errorf("Skipped has %d, NumSkipped = %d; want 100 of 1000", len(r.Skipped()), r.NumSkipped())
	}
}

func TestReaderScope(t *testing.T) {
	body := urlset(
		"<loc>http://example.com/catalog/a</loc>",
		"<loc>http://example.com/catalog/sub/b</loc>",
		"<loc>http://EXAMPLE.com:80/catalog/c</loc>",
		"<loc>http://example.com/images/x</loc>",
		"<loc>http://example.com/catalog/../images/y</loc>",
		"<loc>https://example.com/catalog/s</loc>",
		"<loc>http://www.example.com/catalog/w</loc>",
		"<loc>http://example.com:8080/catalog/p</loc>",
		"<loc>http://example.com/catalogue</loc>",
	)
	const at = "http://example.com/catalog/sitemap.xml"
	inDir := []string{"http://example.com/catalog/a", "http://example.com/catalog/sub/b", "http://EXAMPLE.com:80/catalog/c"}
	tests := []struct {
		name string
		set  func(*Reader)
		want []string
	}{
		{"its own directory", nil, inDir},
		{"named by its own host's robots.txt", func(r *Reader) { r.Robots = "http://example.com/robots.txt" },
			append(slices.Clone(inDir), "http://example.com/images/x", "http://example.com/catalog/../images/y", "http://example.com/catalogue")},
		{"named by another host's robots.txt", func(r *Reader) { r.Robots = "http://www.example.com/robots.txt" },
			append(slices.Clone(inDir), "http://www.example.com/catalog/w")},
		{"lenient", func(r *Reader) { r.Lenient = true }, urls(mustRead(t, at, body, func(r *Reader) { r.Lenient = true }))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, r, err := readAll(t, at, body, tt.set)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(urls(got), tt.want) {
				t.Errorf("read %q; want %q", urls(got), tt.want)
			}
			if r.NumSkipped() != 9-len(tt.want) {
				t.Errorf("NumSkipped = %d; want %d", r.NumSkipped(), 9-len(tt.want))
			}
		})
	}
	if n := len(mustRead(t, at, body, func(r *Reader) { r.Lenient = true })); n != 9 {
		t.Errorf("lenient read %d entries; want all 9", n)
	}
}

// mustRead is readAll that fails the test on an error.
func mustRead(t *testing.T, at string, body []byte, set func(*Reader)) []Entry {
	t.Helper()
	got, _, err := readAll(t, at, body, set)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestReaderIndexScope(t *testing.T) {
	// An index may list the sitemaps of its whole origin, not only its
	// directory's.
	body := `<sitemapindex><sitemap><loc>https://example.com/other/s1.xml</loc></sitemap>
		<sitemap><loc>https://cdn.example.com/s2.xml</loc></sitemap></sitemapindex>`
	got, r, err := readAll(t, "https://example.com/maps/index.xml", []byte(body), nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"https://example.com/other/s1.xml"}; !slices.Equal(urls(got), want) || r.NumSkipped() != 1 {
		t.Errorf("read %q, %d skipped; want %q, 1", urls(got), r.NumSkipped(), want)
	}
}

func TestReaderErrors(t *testing.T) {
	tests := []struct {
		name string
		body []byte
		set  func(*Reader)
		want []string
		err  error
		line int
		skip []Skip
	}{
		{"html", []byte("<!DOCTYPE html><html><body>Not found</body></html>"), nil, nil, ErrNotSitemap, 1, nil},
		{"another root", []byte(`<?xml version="1.0"?><some><tag/></some>`), nil, nil, ErrNotSitemap, 1, nil},
		{"empty", nil, nil, nil, ErrNotSitemap, 1, nil},
		{"white space", []byte(" \n\n "), nil, nil, ErrNotSitemap, 2, nil},
		{"no root", []byte(`<?xml version="1.0"?><!-- nothing -->`), nil, nil, ErrNotSitemap, 1, nil},
		{"text with no URL", []byte("this is a bogus sitemap"), nil, nil, ErrNotSitemap, 1,
			[]Skip{{1, "this is a bogus sitemap", "not an absolute http(s) URL"}}},
		{"cut inside <loc>", []byte("<urlset><url><loc>https://example.com/a</loc></url>\n<url><loc>https://example.com/b</lo"), nil,
			[]string{"https://example.com/a"}, ErrMalformed, 2, []Skip{{2, "https://example.com/b", "truncated"}}},
		{"cut after <loc>", []byte("<sitemapindex><sitemap><loc>https://example.com/1.xml</loc><las"), nil,
			[]string{"https://example.com/1.xml"}, ErrMalformed, 1, nil},
		{"cut between entries", []byte("<urlset><url><loc>https://example.com/a</loc></url>\n"), nil,
			[]string{"https://example.com/a"}, ErrMalformed, 2, nil},
		{"bad markup", []byte("<urlset><url><loc>https://example.com/a</loc></url><url <loc>x</loc></url></urlset>"), nil,
			[]string{"https://example.com/a"}, ErrMalformed, 1, nil},
		{"gzip cut short", gz(urlset("<loc>https://example.com/a</loc>", "<loc>https://example.com/b</loc>"))[:60], nil,
			nil, ErrMalformed, 1, nil},
		{"gzip header broken", []byte{0x1f, 0x8b, 0, 0, 0}, nil, nil, ErrMalformed, 1, nil},
		{"too many", urlset("<loc>https://example.com/1</loc>", "<loc>https://example.com/2</loc>", "<loc>https://example.com/3</loc>"),
			func(r *Reader) { r.Limits.MaxURLs = 2 }, []string{"https://example.com/1", "https://example.com/2"}, ErrTooMany, 5, nil},
		{"too large", urlset("<loc>https://example.com/1</loc>", "<loc>https://example.com/2</loc>"),
			func(r *Reader) { r.Limits.MaxBytes = 200 }, []string{"https://example.com/1"}, ErrTooLarge, 4, []Skip{{4, "h", "truncated"}}},
		{"too large, text", []byte("https://example.com/1\nhttps://example.com/2\n"),
			func(r *Reader) { r.Limits.MaxBytes = 30 }, []string{"https://example.com/1"}, ErrTooLarge, 2, nil},
		{"nested too deep", []byte("<urlset>" + strings.Repeat("<a>", 200)), nil, nil, ErrMalformed, 1, nil},
		{"a token too long", []byte("<urlset><!--" + strings.Repeat("<", 2<<20) + "-->"), nil, nil, ErrTooLarge, 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, r, err := readAll(t, "https://example.com/sitemap.xml", tt.body, tt.set)
			var re *ReadError
			if !errors.Is(err, tt.err) || !errors.As(err, &re) || re.Line != tt.line {
				t.Errorf("error %v; want %v at line %d", err, tt.err, tt.line)
			}
			if !slices.Equal(urls(got), tt.want) {
				t.Errorf("read %q; want %q", urls(got), tt.want)
			}
			if !slices.Equal(r.Skipped(), tt.skip) {
				t.Errorf("Skipped = %+v; want %+v", r.Skipped(), tt.skip)
			}
		})
	}
}

func TestReaderGzipByContent(t *testing.T) {
	// A gzip stream is read as one whatever the URL says, and a plain
	// file is read as one at a URL that ends in .gz; a second member, or
	// bytes after the stream, are not read.
	plain := urlset("<loc>https://example.com/a</loc>")
	for _, tt := range []struct {
		at   string
		body []byte
	}{
		{"https://example.com/sitemap", gz(plain)},
		{"https://example.com/sitemap.xml", gz(plain)},
		{"https://example.com/sitemap.xml.gz", plain},
		{"https://example.com/sitemap.xml.gz", append(gz(plain), '\n')},
		{"https://example.com/sitemap.xml.gz", append(gz(plain), gz(urlset("<loc>https://example.com/b</loc>"))...)},
		{"https://example.com/sitemap.xml.gz", gz(gz(plain))},
	} {
		got, _, err := readAll(t, tt.at, tt.body, nil)
		if err != nil || !slices.Equal(urls(got), []string{"https://example.com/a"}) {
			t.Errorf("%s: read %q, %v; want [https://example.com/a]", tt.at, urls(got), err)
		}
	}
}

func TestReaderEntitiesAreNotExpanded(t *testing.T) {
	// A DOCTYPE is read past: no entity it declares is expanded, and
	// nothing outside the file is read.
	body := `<?xml version="1.0"?>
<!DOCTYPE urlset [
  <!ENTITY xxe SYSTEM "file:///etc/passwd">
  <!ENTITY a "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa">
  <!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
]>
<urlset><url><loc>https://example.com/ok</loc></url><url><loc>&xxe;</loc></url>
<url><loc>https://example.com/&b;</loc></url></urlset>`
	got, r, err := readAll(t, "https://example.com/sitemap.xml", []byte(body), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"https://example.com/ok", "https://example.com/&b;"}
	if !slices.Equal(urls(got), want) || r.NumSkipped() != 1 {
		t.Errorf("read %q, skipped %v; want %q and &xxe; skipped", urls(got), r.Skipped(), want)
	}
}
