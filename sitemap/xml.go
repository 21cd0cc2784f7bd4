package sitemap

import (
	"bufio"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"

	"golang.org/x/net/html/charset"
)

// maxNesting is the deepest the elements of a file may nest: a sitemap
// nests 4 deep, a feed with XHTML content a few more.
const maxNesting = 100

// maxToken is the longest that one XML token (a tag, a run of text, a
// comment) may be, in bytes, so that the decoder, which holds a token
// whole, holds no more.
const maxToken = 1 << 20

// maxField is the most text an entry keeps of one of its fields: a URL of
// 2,048 bytes with room for white space around it.
const maxField = 8 << 10

// errTokenTooLong is the error of a tokenGuard past maxToken.
var errTokenTooLong = errors.New("sitemap: token too long")

// A tokenGuard is what the XML decoder reads: it fails once the decoder
// has read maxToken bytes since the end of its last token.
type tokenGuard struct {
	br   *bufio.Reader
	n    int64 // bytes read
	mark int64 // n at the end of the last token
	over bool  // whether it failed
}

func (g *tokenGuard) ReadByte() (byte, error) {
	if g.n-g.mark >= maxToken {
		g.over = true
		return 0, errTokenTooLong
	}
	c, err := g.br.ReadByte()
	if err == nil {
		g.n++
	}
	return c, err
}

// Read serves a decoder that reads through a CharsetReader.
func (g *tokenGuard) Read(p []byte) (int, error) {
	if g.n-g.mark >= maxToken {
		g.over = true
		return 0, errTokenTooLong
	}
	n, err := g.br.Read(p)
	g.n += int64(n)
	return n, err
}

// charsetReader decodes the character sets that an XML declaration may
// name, as the WHATWG Encoding Standard labels them.
func charsetReader(label string, r io.Reader) (io.Reader, error) {
	return charset.NewReaderLabel(label, r)
}

// A textBuf is the text of one of an entry's fields, cut at maxField.
type textBuf struct {
	b    []byte
	over bool // whether text was cut
}

func (t *textBuf) add(p []byte) {
	if len(t.b)+len(p) > maxField {
		t.over = true
		p = p[:max(maxField-len(t.b), 0)]
	}
	t.b = append(t.b, p...)
}

func (t *textBuf) reset() { t.b, t.over = t.b[:0], false }

// blank reports whether t holds nothing but white space.
func (t *textBuf) blank() bool { return trimURL(t.b) == "" }

// An entryBuf is an entry as the XML has given it so far.
type entryBuf struct {
	loc     textBuf // <loc>, a feed's <link>
	guid    textBuf // an RSS item's <guid>
	bare    textBuf // text right inside the entry's element
	lastmod textBuf // <lastmod>, <pubDate>, <updated>
	alts    []Alternate
	altOver bool
}

func (b *entryBuf) reset() {
	b.loc.reset()
	b.guid.reset()
	b.bare.reset()
	b.lastmod.reset()
	b.alts, b.altOver = b.alts[:0], false
}

// entryElement is the element of an entry in each XML format.
var entryElement = map[Format]string{URLSet: "url", Index: "sitemap", RSS: "item", Atom: "entry"}

// stepXML reads one token, and returns the entry that it ends, if any.
func (r *Reader) stepXML() (Entry, bool) {
	r.guard.mark = r.guard.n
	tok, err := r.dec.RawToken()
	if err != nil {
		return r.endXML(err)
	}
	switch t := tok.(type) {
	case xml.StartElement:
		return r.startElement(t)
	case xml.EndElement:
		return r.endElement(t.Name.Local)
	case xml.CharData:
		switch {
		case r.field != nil:
			r.field.add(t)
		case r.ent != nil && len(r.stack) == r.entAt:
			r.ent.bare.add(t)
		}
	}
	return Entry{}, false
}

// startElement reads a start tag.
func (r *Reader) startElement(t xml.StartElement) (Entry, bool) {
	name := t.Name.Local
	if r.format == "" {
		switch name {
		case "urlset":
			r.format = URLSet
		case "sitemapindex":
			r.format = Index
		case "rss", "RDF":
			r.format = RSS
		case "feed":
			r.format = Atom
		default:
			r.fail(ErrNotSitemap, fmt.Sprintf("root element <%.40s>", name))
			return Entry{}, false
		}
		r.stack = append(r.stack, name)
		return Entry{}, false
	}
	if len(r.stack) == maxNesting {
		r.fail(ErrMalformed, fmt.Sprintf("elements nested deeper than %d", maxNesting))
		return Entry{}, false
	}
	r.stack = append(r.stack, name)
	var e Entry
	var ok bool
	switch {
	case r.ent == nil && name == entryElement[r.format]:
		r.ent = &r.entry
		r.ent.reset()
		r.entAt = len(r.stack)
	case r.ent == nil || r.field != nil:
	case name == entryElement[r.format]:
		// An entry inside an entry: the outer one's end tag was left out.
		if !r.ent.loc.blank() {
			e, ok = r.finish(r.ent)
		}
		r.ent.reset()
		r.entAt = len(r.stack)
	case len(r.stack) == r.entAt+1:
		return r.startField(name, t)
	}
	return e, ok
}

// startField reads the start tag of one of an entry's fields.
func (r *Reader) startField(name string, t xml.StartElement) (Entry, bool) {
	b := r.ent
	var e Entry
	var ok bool
	switch r.format {
	case URLSet, Index:
		switch name {
		case "loc":
			if !b.loc.blank() {
				// A second <loc> starts a new entry, as if the first's
				// end tag had been left out.
				e, ok = r.finish(b)
				b.reset()
			}
			r.field = &b.loc
		case "lastmod":
			r.field = &b.lastmod
		case "link":
			if r.format == URLSet {
				r.alternate(b, t)
			}
		}
	case RSS:
		switch {
		case t.Name.Space != "":
		case name == "link" && b.loc.blank():
			r.field = &b.loc
		case name == "guid":
			r.field = &b.guid
		case name == "pubDate":
			r.field = &b.lastmod
		}
	case Atom:
		switch name {
		case "link":
			rel, href := attr(t, "rel"), attr(t, "href")
			if b.loc.blank() && (rel == "" || rel == "alternate") {
				b.loc.add([]byte(href))
			}
		case "updated":
			r.field = &b.lastmod
		}
	}
	if r.field != nil {
		r.fldAt = len(r.stack)
	}
	return e, ok
}

// alternate reads an <xhtml:link> of a <url>: an alternate, unless it
// gives no href, or a rel other than "alternate".
func (r *Reader) alternate(b *entryBuf, t xml.StartElement) {
	href, rel := attr(t, "href"), attr(t, "rel")
	switch {
	case href == "" || rel != "" && rel != "alternate":
	case len(b.alts) == maxAlternates:
		b.altOver = true
	default:
		b.alts = append(b.alts, Alternate{Hreflang: attr(t, "hreflang"), URL: href})
	}
}

// attr returns the value of t's attribute of that name, in no name space.
func attr(t xml.StartElement, name string) string {
	for _, a := range t.Attr {
		if a.Name.Local == name && a.Name.Space == "" {
			return a.Value
		}
	}
	return ""
}

// endElement reads an end tag. It closes the elements open inside the
// one it names, whose end tags were left out; an end tag that names no
// open element is passed over.
func (r *Reader) endElement(name string) (Entry, bool) {
	i := len(r.stack) - 1
	for i >= 0 && r.stack[i] != name {
		i--
	}
	if i < 0 {
		r.skip(r.lineNow(), "</"+name+">", "end tag with no start tag")
		return Entry{}, false
	}
	var e Entry
	var ok bool
	for len(r.stack) > i {
		switch depth := len(r.stack); {
		case r.field != nil && depth == r.fldAt:
			r.field = nil
		case r.ent != nil && depth == r.entAt:
			e, ok = r.finish(r.ent)
			r.ent = nil
		}
		r.stack = r.stack[:len(r.stack)-1]
	}
	if len(r.stack) == 0 {
		r.err = io.EOF // the root has ended: what follows it is not read
	}
	return e, ok
}

// endXML ends the reading at err, the decoder's error. An entry that the
// file leaves open is yielded if its URL was read whole, and skipped as
// truncated if not.
func (r *Reader) endXML(err error) (Entry, bool) {
	switch {
	case err == io.EOF && r.format == "":
		r.fail(ErrNotSitemap, "no root element")
	case err == io.EOF:
		r.fail(ErrMalformed, fmt.Sprintf("the file ends inside <%.40s>", r.stack[len(r.stack)-1]))
	default:
		r.fail(ErrMalformed, err.Error())
	}
	b := r.ent
	if b == nil {
		return Entry{}, false
	}
	r.ent = nil
	if src := r.urlSource(b); r.field == src || src == &b.bare && len(r.stack) == r.entAt {
		r.skip(r.lineNow(), trimURL(src.b), "truncated")
		return Entry{}, false
	}
	return r.finish(b)
}

// urlSource returns the field of b that holds its URL: its <loc> or link;
// an RSS item's <guid> when it has no <link>; the text right inside the
// entry's element when it has no <loc>, as some indexes write
// <sitemap>URL</sitemap>.
func (r *Reader) urlSource(b *entryBuf) *textBuf {
	switch {
	case !b.loc.blank():
		return &b.loc
	case r.format == RSS:
		return &b.guid
	}
	return &b.bare
}

// finish returns the entry that b holds, or skips it.
func (r *Reader) finish(b *entryBuf) (Entry, bool) {
	line := r.lineNow()
	src := r.urlSource(b)
	raw := trimURL(src.b)
	switch {
	case src.over:
		r.skip(line, raw, "URL longer than 2,048 bytes")
		return Entry{}, false
	case raw == "" || src == &b.guid && !strings.Contains(raw, "://"):
		// A <guid> that is not a URL names no page.
		r.skip(line, "", "no URL")
		return Entry{}, false
	}
	sitemap := r.format == Index
	u, why := r.check(raw, sitemap)
	if why != "" {
		r.skip(line, raw, why)
		return Entry{}, false
	}
	e := Entry{URL: u, Sitemap: sitemap, LastMod: parseDate(string(b.lastmod.b))}
	for _, a := range b.alts {
		au, why := r.check(strings.TrimFunc(a.URL, unicode.IsSpace), false)
		if why != "" {
			r.skip(line, a.URL, "alternate: "+why)
			continue
		}
		e.Alternates = append(e.Alternates, Alternate{Hreflang: a.Hreflang, URL: au})
	}
	if b.altOver {
		r.skip(line, u, fmt.Sprintf("more than %d alternates", maxAlternates))
	}
	return e, true
}
