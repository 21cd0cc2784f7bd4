package sitemap

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"unicode"
)

// maxURLLength is the longest URL an entry may have, in bytes: the
// protocol asks for "less than 2,048 characters", and sitemaps write URLs
// escaped, in ASCII.
const maxURLLength = 2048

// maxAlternates is the most alternates an entry keeps: one for each
// language and region a site could serve, and more.
const maxAlternates = 256

// maxSkipped is the number of skips a Reader keeps to show.
const maxSkipped = 100

// A Reader reads the entries of one sitemap, one at a time, so that a
// file of 50,000 URLs is never held whole. It reads the XML formats of
// the sitemaps.org protocol (<urlset> and <sitemapindex>), RSS 2.0 and 1.0
// and Atom 1.0 feeds, and text files of one URL per line, each plain or
// gzip-compressed, told by their content. See the package doc for what it
// yields, skips and refuses.
//
// Set its fields before the first call to Next.
type Reader struct {
	// Robots is the URL of the robots.txt whose Sitemap line named this
	// sitemap, or named the index that listed it; "" if none did. The
	// sitemap may then list URLs anywhere on that robots.txt's origin
	// (the sitemaps.org protocol, "Sitemaps & Cross Submits").
	Robots string
	// Lenient yields entries outside the sitemap's scope too, as
	// crawler-commons' SiteMapParser does when it is not strict.
	Lenient bool
	// Limits bounds the reading; of its fields, MaxURLs and MaxBytes
	// apply.
	Limits Limits

	body    io.Reader
	u       *url.URL // the sitemap's URL, or nil
	started bool
	in      *input
	lim     Limits
	scope   scope
	lenient bool // Lenient, or no URL to take a scope from
	format  Format
	err     error // once set, what Next returns

	// For XML.
	dec   *xml.Decoder
	guard *tokenGuard
	stack []string  // the local names of the open elements
	entry entryBuf  // the entry being read, when ent points to it
	ent   *entryBuf // &entry while an entry is open, or nil
	entAt int       // len(stack) with the entry's element open
	field *textBuf  // the entry's field whose text is being read, or nil
	fldAt int       // len(stack) with the field's element open

	lines int // the lines before the first that the decoder reads, or the text lines read

	yielded    int // entries yielded
	urls       int // absolute http(s) URLs found, whether yielded or not
	skipped    []Skip
	numSkipped int
}

// NewReader returns a Reader of body, the sitemap at u. From u come the
// sitemap's scope and the base of a feed's relative links; a nil u reads
// as Lenient, and a feed's relative links are then skipped.
func NewReader(body io.Reader, u *url.URL) *Reader {
	return &Reader{body: body, u: u}
}

// Format returns the kind of file the Reader found, after the first call
// to Next; "" before, or when the file is not a sitemap.
func (r *Reader) Format() Format { return r.format }

// Skipped returns the first 100 parts of the file that the Reader passed
// over, in order; NumSkipped counts them all.
func (r *Reader) Skipped() []Skip { return slices.Clone(r.skipped) }

// NumSkipped returns the number of parts of the file that the Reader
// passed over.
func (r *Reader) NumSkipped() int { return r.numSkipped }

// Next returns the file's next entry. After the last, it returns io.EOF.
// Any other error, a [*ReadError], ends the reading as well: the file is
// not a sitemap, is malformed or cut short, or passes a limit; or the
// body failed. The entries before the fault have been returned. Once Next
// has returned an error, it returns the same error again.
func (r *Reader) Next() (Entry, error) {
	if !r.started {
		r.start()
	}
	for r.err == nil {
		var e Entry
		var ok bool
		if r.dec != nil {
			e, ok = r.stepXML()
		} else {
			e, ok = r.stepText()
		}
		if !ok {
			continue
		}
		if r.yielded == r.lim.MaxURLs {
			r.err = &ReadError{Line: r.lineNow(), Err: ErrTooMany,
				Detail: fmt.Sprintf("more than %d entries", r.lim.MaxURLs)}
			break
		}
		r.yielded++
		return e, nil
	}
	return Entry{}, r.err
}

// start opens the body and finds the file's kind.
func (r *Reader) start() {
	r.started = true
	r.lim = r.Limits.withDefaults()
	r.lenient = r.Lenient || r.u == nil
	if r.u != nil {
		r.scope = newScope(r.u, r.Robots)
	}
	in, err := openInput(r.body, r.lim.MaxBytes)
	r.in = in
	if err != nil {
		r.fail(ErrMalformed, "gzip: "+err.Error())
		return
	}
	// White space before the first byte that tells the format is read
	// past a byte at a time: a server that sends a short file slowly is
	// not waited on for more.
	for {
		c, err := in.br.ReadByte()
		if err != nil {
			break
		}
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			in.br.UnreadByte()
			if c == '<' {
				r.guard = &tokenGuard{br: in.br}
				r.dec = xml.NewDecoder(r.guard)
				r.dec.Strict = false // an unescaped '&' in a URL is read as written
				r.dec.CharsetReader = charsetReader
				return
			}
			break
		}
		if c == '\n' {
			r.lines++
		}
	}
	r.format = Text
}

// lineNow returns the line the Reader has come to.
func (r *Reader) lineNow() int {
	if r.dec != nil {
		line, _ := r.dec.InputPos()
		return r.lines + line
	}
	return max(r.lines, 1)
}

// fail ends the reading with why, a sentinel, and detail; or, when the
// input failed, with what its fault stands for: the body's own error, a
// limit, or a broken gzip stream.
func (r *Reader) fail(why error, detail string) {
	switch f := r.in.fault(); {
	case r.guard != nil && r.guard.over:
		why, detail = ErrTooLarge, fmt.Sprintf("an XML token longer than %d bytes", maxToken)
	case f == ErrTooLarge:
		why, detail = f, fmt.Sprintf("more than %d bytes", r.lim.MaxBytes)
	case f != nil:
		why = f
		if !isSentinel(f) {
			detail = "" // the body's own error says it all
		}
	}
	r.err = &ReadError{Line: r.lineNow(), Err: why, Detail: detail}
}

// skip notes a part of the file passed over.
func (r *Reader) skip(line int, text, reason string) {
	r.numSkipped++
	if len(r.skipped) < maxSkipped {
		if len(text) > 120 {
			text = text[:120]
		}
		r.skipped = append(r.skipped, Skip{Line: line, Text: strings.ToValidUTF8(text, "\uFFFD"), Reason: reason})
	}
}

// check returns the URL that raw, an entry's URL as written, stands for,
// or why it is skipped. A feed's URL is resolved against the sitemap's;
// any other must be absolute. sitemap says that raw names a sitemap.
func (r *Reader) check(raw string, sitemap bool) (string, string) {
	if i := strings.IndexByte(raw, '#'); i >= 0 {
		raw = raw[:i]
	}
	if len(raw) > maxURLLength {
		return "", "URL longer than 2,048 bytes"
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", "not an absolute http(s) URL"
	}
	if (r.format == RSS || r.format == Atom) && !u.IsAbs() && r.u != nil {
		u = r.u.ResolveReference(u)
		raw = u.String()
		if len(raw) > maxURLLength {
			return "", "URL longer than 2,048 bytes"
		}
	}
	if s := strings.ToLower(u.Scheme); s != "http" && s != "https" || u.Host == "" {
		return "", "not an absolute http(s) URL"
	}
	r.urls++
	if !r.lenient && !r.scope.allows(u, sitemap) {
		return "", "out of scope"
	}
	return raw, ""
}

// trimURL returns s without the white space around it, Unicode's too.
func trimURL(s []byte) string {
	return string(bytes.TrimFunc(s, unicode.IsSpace))
}
