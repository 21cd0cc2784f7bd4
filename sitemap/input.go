package sitemap

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
)

// errLimit is the error of a limitReader past its limit.
var errLimit = errors.New("sitemap: limit reached")

// A limitReader reads at most n bytes of r and then fails with errLimit,
// so that a file one byte longer than the limit is told from one that
// ends at it. It keeps the first error of r apart, to tell the body's
// faults from the file's.
type limitReader struct {
	r   io.Reader
	n   int64 // bytes left
	hit bool  // whether it failed with errLimit
	err error // the first error of r other than io.EOF
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		// One more byte tells whether the file goes on past the limit.
		var b [1]byte
		switch n, err := io.ReadFull(l.r, b[:]); {
		case n == 0 && err == io.EOF:
			return 0, io.EOF
		case n == 0:
			if l.err == nil {
				l.err = err
			}
			return 0, err
		}
		l.hit = true
		return 0, errLimit
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	if err != nil && err != io.EOF && l.err == nil {
		l.err = err
	}
	return n, err
}

// gzipMagic starts every gzip stream (RFC 1952 §2.3.1).
var gzipMagic = []byte{0x1f, 0x8b}

// utf8BOM is the byte order mark that some files start with.
var utf8BOM = []byte{0xef, 0xbb, 0xbf}

// An input is a file's bytes as a Reader reads them: bounded as they
// arrive and, when they are a gzip stream, bounded again decompressed.
type input struct {
	raw  *limitReader // the body, as received
	out  *limitReader // what the reader reads: raw, or raw decompressed
	br   *bufio.Reader
	gzEr error // a gzip reader's error, when it found its stream broken
}

// openInput reads body as a sitemap's bytes, of at most max bytes both as
// received and decompressed. It decompresses a gzip stream, told by its
// first two bytes and not by any name or header, twice if need be (a .gz
// file served with Content-Encoding: gzip to a client that did not
// decode it), and drops a byte order mark.
func openInput(body io.Reader, max int64) (*input, error) {
	in := &input{raw: &limitReader{r: body, n: max}}
	var src io.Reader = in.raw
	for range 2 {
		head := bufio.NewReaderSize(src, 512)
		src = head
		if b, _ := head.Peek(2); !bytes.Equal(b, gzipMagic) {
			break
		}
		gz, err := gzip.NewReader(head)
		if err != nil {
			return in, err
		}
		// One member: what follows it, often a stray newline, is not read.
		gz.Multistream(false)
		src = gzipErrs{gz, in}
	}
	in.out = &limitReader{r: src, n: max}
	in.br = bufio.NewReaderSize(in.out, 8<<10)
	if b, _ := in.br.Peek(3); bytes.Equal(b, utf8BOM) {
		in.br.Discard(3)
	}
	return in, nil
}

// gzipErrs passes on a gzip reader's bytes and notes its errors.
type gzipErrs struct {
	gz *gzip.Reader
	in *input
}

func (g gzipErrs) Read(p []byte) (int, error) {
	n, err := g.gz.Read(p)
	if err != nil && err != io.EOF && g.in.gzEr == nil {
		g.in.gzEr = err
	}
	return n, err
}

// fault returns the sentinel, or the body's error, that explains an error
// met in reading in: the body's own error first, then a limit, then a
// broken gzip stream; nil when none does, and the error is the file's own.
func (in *input) fault() error {
	switch {
	case in.raw.err != nil:
		return in.raw.err
	case in.raw.hit || in.out != nil && in.out.hit:
		return ErrTooLarge
	case in.gzEr != nil:
		return ErrMalformed
	}
	return nil
}
