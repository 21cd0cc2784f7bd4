package sitemap

import "time"

// An Entry is one URL that a sitemap lists: a page, or in a sitemap index
// another sitemap.
type Entry struct {
	// URL is an absolute http or https URL as the file writes it, with no
	// fragment and at most 2,048 bytes long.
	URL string
	// LastMod is when the page or sitemap last changed, as the file says
	// (<lastmod>, a feed's <pubDate> or <updated>); zero when the file
	// gives no date or one that does not parse.
	LastMod time.Time
	// Sitemap reports that URL names a sitemap: the entry is a <sitemap>
	// of a sitemap index.
	Sitemap bool
	// Alternates are the page's versions in other languages, from its
	// <xhtml:link rel="alternate" hreflang="..." href="..."/> elements, in
	// the file's order. Each URL is held to the same rules as the entry's.
	Alternates []Alternate
}

// An Alternate is a version of a page in another language or for another
// region.
type Alternate struct {
	// Hreflang is the language, as the file writes it: "de", "de-ch",
	// "x-default"; empty when the link gives none.
	Hreflang string
	// URL is the version's absolute http or https URL.
	URL string
}

// A Format is the kind of file a Reader found, by its content.
type Format string

// The formats a Reader reads.
const (
	URLSet Format = "urlset"       // XML <urlset>, sitemaps.org protocol
	Index  Format = "sitemapindex" // XML <sitemapindex>: its entries name sitemaps
	RSS    Format = "rss"          // RSS 2.0 (and RSS 1.0): each <item>'s <link>
	Atom   Format = "atom"         // Atom 1.0: each <entry>'s <link href>
	Text   Format = "text"         // one URL per line
)

// A Skip is a part of a sitemap that a Reader or a Walker passed over: an
// entry it did not yield, or markup it could not place.
type Skip struct {
	// Line is the line of the file where the entry or markup ends, from 1.
	Line int
	// Text is the entry's URL, or the markup, as written, cut to its first
	// 120 bytes; empty when the entry gave none.
	Text string
	// Reason says why: "no URL", "not an absolute http(s) URL", "URL longer
	// than 2,048 bytes", "out of scope", "truncated", "line longer than
	// 8 KiB", "end tag with no start tag", "alternate: ..." (an alternate
	// dropped from an entry that is kept, for one of the reasons above),
	// "more than 256 alternates"; and from a Walker, "nested deeper than
	// MaxDepth" and "more sitemaps than MaxSitemaps".
	Reason string
}
