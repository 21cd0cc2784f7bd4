// Package sitemap reads the sitemaps a site publishes and walks them
// through the caller's HTTP client, so that a crawler can seed itself with
// the pages a site lists, those no link reaches among them.
//
// A crawler's second question, after "may I?", is "what is there?". A
// site answers in its sitemaps, which its robots.txt names: XML files of
// up to 50,000 URLs each, indexes of such files, feeds, text files, often
// gzipped. Fetched past the politeness layer, they are requests the
// crawler's pacing does not see; held whole, thousands of them do not fit
// in memory. A [Walker] fetches them through the [http.Client] it is given,
// whose Transport is the crawler's [github.com/polite-go/polite]
// transport, so each fetch waits its turn with the host's other requests,
// is counted, and is refused when robots.txt disallows it; and it hands
// each page URL on as it reads it:
//
//	w := &sitemap.Walker{Client: &http.Client{Transport: tr}} // tr: a *polite.PoliteTransport
//	f, _ := tr.Robots(req)                                     // req: a GET of origin's home page
//	stats, err := w.Walk(ctx, sitemap.FromRobots(origin+"/robots.txt", f),
//		func(e sitemap.Entry) error {
//			_, err := fr.Add(ctx, e.URL) // fr: a *frontier.Frontier
//			return err
//		})
//
// A [Reader] reads one body the caller has fetched, one entry at a time.
//
// # Reading
//
// The format is told by the content, never by a name or a header: a gzip
// stream (its first two bytes, RFC 1952) is decompressed, one member of it;
// a UTF-8 byte order mark and white space are passed over; then a file
// whose first byte is '<' is XML, and any other is text, one URL per line.
// The XML formats are those of the root element: <urlset> and
// <sitemapindex> (sitemaps.org protocol, in any name space or none), RSS
// 2.0 (<rss>, and RSS 1.0's <rdf:RDF>) and Atom 1.0 (<feed>).
//
// An [Entry] holds the URL of a <url>'s or <sitemap>'s <loc>, of an RSS
// item's <link> (or its <guid>, when it has no link and the guid is a URL),
// or of an Atom entry's <link> whose rel is "alternate" or absent; its
// date, from <lastmod> (the W3C Datetime forms, and RFC 3339), <pubDate>
// (RFC 822, with two- or four-digit years) or <updated>, in UTC; and a
// page's alternates, from its <xhtml:link> elements. A second <loc> in an
// entry starts another entry, and a <sitemap> whose URL is its text
// (<sitemap>URL</sitemap>) is read as if the text were in a <loc>, as
// crawler-commons reads them. <changefreq> and <priority> are not read.
// A feed's relative links are resolved against the sitemap's URL; the
// protocol's <loc> must be absolute, and one that is not is skipped: the
// reader does not guess that "www.example.com/a" meant http.
//
// The reader is tolerant, as RFC 9309 asks a robots.txt reader to be:
// what it understands is kept, and what it does not is passed over and
// noted in [Reader.Skipped] (the first 100, with their lines and reasons)
// and counted by [Reader.NumSkipped]. An entry is skipped when it has no
// URL, a URL that is not absolute http or https, longer than 2,048 bytes,
// or out of scope; an alternate alone, for the same reasons; an end tag
// that names no open element is passed over, and one that names an
// element further out closes the elements inside it. The XML is read in
// the decoder's non-strict mode, so that an '&' left unescaped in a URL is
// read as written. No entity is ever expanded, and nothing outside the
// file is read: a DOCTYPE is passed over.
//
// A file that cannot be read on ends the reading with a [*ReadError],
// which matches one of the sentinels: [ErrNotSitemap] (an HTML page, an
// XML document with another root, a text file with no URL on any line),
// [ErrMalformed] (broken or cut-short XML or gzip), [ErrTooLarge] or
// [ErrTooMany] (the limits below). The entries before the fault have been
// yielded: a truncated file yields what it held whole. An entry the fault
// cuts is yielded if its URL was read to its end tag, and skipped as
// "truncated" if not.
//
// # Scope
//
// A sitemap may list only URLs on its own origin (scheme, host and port),
// under its own directory: https://example.com/catalog/sitemap.xml may
// list https://example.com/catalog/a, not https://example.com/images/b
// nor http://example.com/catalog/a. An index may list the sitemaps of its
// whole origin. A sitemap that a robots.txt names may list URLs anywhere
// on that robots.txt's origin, whatever origin the sitemap is on
// ("Sitemaps & Cross Submits"); so may the sitemaps of an index that a
// robots.txt names, which vouches for the index. [Reader.Robots] and
// [Source.Robots] say which robots.txt named a sitemap, and [FromRobots]
// sets them. A URL out of scope is skipped; [Reader.Lenient] and
// [Walker.Lenient] take it, as crawler-commons does when it is not
// strict. The scope is taken from the URL the sitemap was asked at, not
// from where redirects took it.
//
// # Limits
//
// Each is a field of [Limits], and a zero field takes its default:
//
//	MaxURLs      50,000      entries a Reader yields from one file (the protocol's)
//	MaxBytes     52,428,800  bytes of one file, as received and decompressed (the protocol's 50 MiB)
//	MaxDepth     2           levels of index a Walker follows below its sources
//	MaxSitemaps  1,000       sitemaps a Walker fetches in one walk
//
// A gzip bomb stops at MaxBytes decompressed, and an endless body at
// MaxBytes or MaxURLs, with the error that names the limit. Besides them,
// fixed bounds: a URL is at most 2,048 bytes (the protocol's "less than
// 2,048 characters"), an entry keeps at most 256 alternates, elements nest
// at most 100 deep, one XML token (a tag, a run of text, a comment) is at
// most 1 MiB, and a text line at most 8 KiB. Time is the caller's to
// bound, by the walk's context and the client's Timeout: a server that
// sends nothing holds the walk until one of them ends it.
//
// # Walking
//
// [Walker.Walk] fetches the sources in order, then the sitemaps their
// indexes list, breadth first, each URL once, to MaxDepth levels and
// MaxSitemaps in all, and calls its function with each page URL, as it
// reads it; an index's sitemaps wait in a queue of at most MaxSitemaps
// URLs. With [Walker.Since] set, an entry whose date is before it is
// passed over, a sitemap of an index then not being fetched; an entry with
// no date is taken. A sitemap that fails, with a network error, a refusal
// by the transport (polite's ErrRobotsBlocked, which arrives inside a
// *url.Error), a status other than 2xx ([*StatusError]), or a [*ReadError],
// is reported to [Walker.Report] and the walk goes on with the others. The
// walk ends when the queue is empty, when its context ends, or when its
// function returns an error, which Walk returns.
//
// # Cost
//
// A Reader holds the entry it is reading, a buffer of 8 KiB, a gzip
// reader's window, and what encoding/xml holds of one token; nothing grows
// with the file: reading the 50,000 URLs of a gzipped sitemap of 10 MB (0.5 MB gzipped),
// its live heap stays under 60 KB, and a gzip bomb's or a 50 MB text
// node's under 1.2 MB. That reading takes about 0.35 s of CPU on the
// machine of BENCHMARKS.md, 1.2 times what encoding/xml's tokenizer alone
// takes on the same file, and 35 allocations a URL, 30 of them the
// tokenizer's (BENCHMARKS.md, "Sitemaps"). A walk holds its queue and the
// set of sitemap URLs it has seen, at most MaxSitemaps each.
//
// The Go sitemap parsers that were looked at did not fit: those that
// fetch use http.Get or their own client, past any politeness layer, or
// hold the whole file, or its whole list of URLs, in memory, and none
// bounds what a gzip stream inflates to; so this package reads with the
// standard library's encoding/xml, compress/gzip and bufio.
//
// A Reader is not safe for concurrent use. A Walker may walk in several
// goroutines at once.
package sitemap
