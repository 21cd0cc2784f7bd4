package frontier

import (
	"encoding/binary"
	"strings"
)

// A urlQueue is one host's URLs, first in first out, packed into one byte
// slice: each URL is a uvarint, its length times two plus one when it
// starts with the queue's prefix, then its bytes without that prefix. A URL
// costs its own bytes past the prefix and a byte or two, and no object of
// its own; the slice's spare capacity and the part already read are the
// only waste, and the part read is reclaimed once it is half the slice.
type urlQueue struct {
	prefix string // the origin of the first URL pushed, "scheme://host[:port]" as written
	buf    []byte // the URLs, encoded, from off on
	off    int    // where the first URL not yet popped starts
	n      int    // URLs queued
}

// shrinkAbove is the capacity above which an emptied queue gives its slice
// back, rather than keeping it for the URLs to come.
const shrinkAbove = 4 << 10

// push adds s at the tail.
func (q *urlQueue) push(s string) {
	if q.n == 0 && q.prefix == "" {
		q.prefix = originPrefix(s)
	}
	rest, flag := s, uint64(0)
	if q.prefix != "" && strings.HasPrefix(s, q.prefix) {
		rest, flag = s[len(q.prefix):], 1
	}
	need := binary.MaxVarintLen64 + len(rest)
	if q.off > 0 && len(q.buf)+need > cap(q.buf) && q.off >= len(q.buf)/2 {
		q.buf = q.buf[:copy(q.buf, q.buf[q.off:])]
		q.off = 0
	}
	q.buf = binary.AppendUvarint(q.buf, uint64(len(rest))<<1|flag)
	q.buf = append(q.buf, rest...)
	q.n++
}

// head returns the URL at the head, which must exist.
func (q *urlQueue) head() string {
	s, _ := q.decode()
	return s
}

// pop drops the URL at the head, which must exist.
func (q *urlQueue) pop() {
	_, size := q.decode()
	q.off += size
	q.n--
	if q.n == 0 {
		q.off = 0
		q.buf = q.buf[:0]
		if cap(q.buf) > shrinkAbove {
			q.buf = nil
		}
	}
}

// decode returns the URL at the head and the bytes it takes.
func (q *urlQueue) decode() (string, int) {
	v, k := binary.Uvarint(q.buf[q.off:])
	start := q.off + k
	rest := q.buf[start : start+int(v>>1)]
	if v&1 == 1 {
		return q.prefix + string(rest), k + len(rest)
	}
	return string(rest), k + len(rest)
}

// originPrefix returns the part of rawURL before its path, query or
// fragment, as written: "http://example.com:8080" for
// "http://example.com:8080/a?b". It returns "" when rawURL has no "//".
func originPrefix(rawURL string) string {
	i := strings.Index(rawURL, "//")
	if i < 0 {
		return ""
	}
	if j := strings.IndexAny(rawURL[i+2:], "/?#"); j >= 0 {
		return rawURL[:i+2+j]
	}
	return rawURL
}
