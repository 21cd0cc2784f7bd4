package sitemap

import (
	"bufio"
	"io"
)

// stepText reads one line of a text sitemap, and returns its entry, if it
// has one.
func (r *Reader) stepText() (Entry, bool) {
	line, err := r.in.br.ReadSlice('\n')
	long := ""
	if err == bufio.ErrBufferFull {
		long = string(line[:120]) // what Skip shows of it
	}
	for err == bufio.ErrBufferFull {
		_, err = r.in.br.ReadSlice('\n')
	}
	if err != nil && err != io.EOF {
		r.lines++
		r.fail(ErrMalformed, err.Error())
		return Entry{}, false
	}
	if len(line) > 0 || long != "" {
		r.lines++
	}
	e, ok := r.textLine(line, long)
	if err == io.EOF {
		r.endText()
	}
	return e, ok
}

// textLine returns the entry of a line, if it has one.
func (r *Reader) textLine(line []byte, long string) (Entry, bool) {
	if long != "" {
		r.skip(r.lines, long, "line longer than 8 KiB")
		return Entry{}, false
	}
	raw := trimURL(line)
	if raw == "" {
		return Entry{}, false
	}
	u, why := r.check(raw, false)
	if why != "" {
		r.skip(r.lines, raw, why)
		return Entry{}, false
	}
	return Entry{URL: u}, true
}

// endText ends the reading at the end of the file: a file with no URL on
// any line is not a sitemap.
func (r *Reader) endText() {
	if r.urls == 0 {
		r.fail(ErrNotSitemap, "no line is an absolute http(s) URL")
		return
	}
	r.err = io.EOF
}
