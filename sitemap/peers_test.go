package sitemap

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/polite-go/polite/robotstxt"
)

// A peerCase is one case of a peer's test suite, with the peer's answer,
// as testdata/peers/record.py recorded it (testdata/peers/README.md).
type peerCase struct {
	ID          string
	Test        string
	Kind        string // "" to read a sitemap; "scope", "date", "robots"
	URL         string
	Body        string
	BodyLatin1  string `json:"body_latin1"`
	File        string
	PeerOptions []string `json:"peer_options"`
	Lenient     bool
	Since       string
	MaxBytes    int64 `json:"max_bytes"`
	Date        string
	ScopeURL    string `json:"scope_url"`
	Want        struct {
		Format     string
		FromSpider bool `json:"from_spider"` // only the URLs the spider's test asks
		Lastmod    string
		Entries    []struct {
			URL           string
			Lastmod       string
			Sitemap       bool
			Alternates    []string
			AlternateURLs []string `json:"alternate_urls"`
		}
	}
}

// peerOwnChoices are the cases where this package reads the file otherwise
// than the peer, with the reason; TestPeerSuites checks that each still
// differs, so that the list stays true.
var peerOwnChoices = map[string]string{
	"crawler-commons/002": "a DOCTYPE is read past and its entities are never expanded, so nothing outside the file can be read and the file " +
		"is not refused; the peer refuses any DOCTYPE by default (with DOCTYPEs allowed, case 003, the two agree)",
	"crawler-commons/006": "the reader takes a <urlset> in any name space, as the peer does by default (case 007); " +
		"the peer's strict name space option refuses this file, and the reader has no such option",
	"crawler-commons/011": "a URL without a scheme is not guessed at: the peer's URL normalizer, an option, makes " +
		"\"www.example.com/...\" an http URL; the protocol asks for full URLs",
	"crawler-commons/019": "as 011, with the peer's normalizer",
	"crawler-commons/021": "an index may list only the sitemaps of its own site (the protocol: \"can only specify Sitemaps that are " +
		"found on the same site as the Sitemap index file\"), unless robots.txt named it or the reader is Lenient; the peer applies " +
		"its scope rule to the pages of a sitemap only, and takes this index's sitemaps on example.com from www.example.com",
	"crawler-commons/022": "as 021: an index on www.example.com lists sitemaps on www.example.org",
	"crawler-commons/023": "as 021",
	"crawler-commons/041": "an entry cut short inside its <loc> is skipped as truncated: its URL may be cut too; the peer, " +
		"told to read partial files, takes \"http://www.example.com/\" from \"<loc>http://www.example.com/</lo\"",
	"scrapy/009": "an entity is never expanded: the undeclared \"&xxe;\" stays in the URL as written, as an unescaped '&' does; " +
		"lxml's recovering parser drops the reference",
	"scrapy/020": "a Sitemap line must give a full URL, as the protocol asks (robotstxt skips the others); Scrapy resolves " +
		"\"/sitemap-relative-url.xml\" against the robots.txt's URL",
	"scrapy/021": "a byte that is not UTF-8 is kept, and escaped when the URL is sent, as in any URL (RFC 3986 §2.1); " +
		"Scrapy drops the line, whose text it cannot decode",
}

func TestPeerSuites(t *testing.T) {
	for _, suite := range []string{"crawler-commons", "scrapy"} {
		t.Run(suite, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "peers", suite+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var s struct{ Cases []peerCase }
			if err := json.Unmarshal(data, &s); err != nil {
				t.Fatal(err)
			}
			if len(s.Cases) == 0 {
				t.Fatal("no cases")
			}
			for _, c := range s.Cases {
				differs, err := peerDiffers(t, &c)
				if err != nil {
					t.Fatalf("%s (%s): %v", c.ID, c.Test, err)
				}
				why, own := peerOwnChoices[c.ID]
				switch {
				case own && differs == "":
					t.Errorf("%s (%s): listed as the peer's own choice (%s), but the reader agrees", c.ID, c.Test, why)
				case !own && differs != "":
					t.Errorf("%s (%s): %s", c.ID, c.Test, differs)
				}
			}
		})
	}
}

// peerDiffers asks this package what c asks the peer, and says how the
// answers differ; "" when they agree. Two readings agree when they yield
// the same URLs, in order, each naming a sitemap or not alike, with the
// same date when the peer gives one and none when it gives none, and the
// same alternates when the peer reads them.
func peerDiffers(t *testing.T, c *peerCase) (string, error) {
	body := []byte(c.Body)
	switch {
	case c.File != "":
		b, err := os.ReadFile(filepath.Join("testdata", "peers", c.File))
		if err != nil {
			return "", err
		}
		body = b
	case c.BodyLatin1 != "":
		body = nil
		for _, r := range c.BodyLatin1 {
			body = append(body, byte(r))
		}
	}
	var want []string
	for _, e := range c.Want.Entries {
		want = append(want, e.URL)
	}
	switch c.Kind {
	case "scope":
		u, v := mustParse(c.URL), mustParse(c.ScopeURL)
		if got := newScope(u, "").allows(v, false); got != (len(want) > 0) {
			return fmt.Sprintf("%s in the scope of %s: %v; the peer says %v", v, u, got, !got), nil
		}
		return "", nil
	case "date":
		got := parseDate(c.Date)
		if !sameInstant(got, c.Want.Lastmod) {
			return fmt.Sprintf("parseDate(%q) = %v; the peer says %q", c.Date, got, c.Want.Lastmod), nil
		}
		return "", nil
	case "robots":
		var got []string
		for _, s := range FromRobots(c.URL, robotstxt.Parse(body)) {
			got = append(got, s.URL)
		}
		if !slices.Equal(got, want) {
			return fmt.Sprintf("FromRobots = %q; the peer says %q", got, want), nil
		}
		return "", nil
	}
	entries, r, err := readAll(t, c.URL, body, func(r *Reader) {
		r.Lenient = c.Lenient
		r.Limits.MaxBytes = c.MaxBytes
	})
	if c.Since != "" {
		since, perr := time.Parse(time.RFC3339, c.Since)
		if perr != nil {
			return "", perr
		}
		entries = slices.DeleteFunc(entries, func(e Entry) bool { return unchanged(e, since) })
	}
	if f := Format(c.Want.Format); f == URLSet || f == Index || f == RSS || f == Atom || f == Text {
		if r.Format() != f {
			return fmt.Sprintf("read as %q (%v); the peer reads %q", r.Format(), err, f), nil
		}
	}
	if !slices.Equal(urls(entries), want) {
		return fmt.Sprintf("read %q (%v, skipped %v); the peer reads %q", urls(entries), err, r.Skipped(), want), nil
	}
	for i, w := range c.Want.Entries {
		if c.Want.FromSpider {
			break
		}
		e := entries[i]
		if e.Sitemap != w.Sitemap || !sameInstant(e.LastMod, w.Lastmod) {
			return fmt.Sprintf("%s: sitemap %v, lastmod %v; the peer says %v, %q", e.URL, e.Sitemap, e.LastMod, w.Sitemap, w.Lastmod), nil
		}
		var alts, altURLs []string
		for _, a := range e.Alternates {
			alts = append(alts, a.Hreflang+"="+a.URL)
			altURLs = append(altURLs, a.URL)
		}
		if w.Alternates != nil && !slices.Equal(alts, w.Alternates) || w.AlternateURLs != nil && !slices.Equal(altURLs, w.AlternateURLs) {
			return fmt.Sprintf("%s: alternates %q; the peer says %q%q", e.URL, alts, w.Alternates, w.AlternateURLs), nil
		}
	}
	return "", nil
}

// sameInstant reports whether t is the instant s gives in RFC 3339, or is
// zero when s is empty.
func sameInstant(t time.Time, s string) bool {
	if s == "" {
		return t.IsZero()
	}
	w, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s))
	return err == nil && t.Equal(w)
}
