package audit

import (
	"bytes"
	"time"
)

// A logRecord is one request as a line of an access log gives it. Its byte
// slices point into the line, or into the parser's buffers, and hold until
// the next line is parsed.
type logRecord struct {
	start int64 // Unix nanoseconds: when the request started
	end   int64 // when it was answered: start, unless the line gives a duration
	res   int64 // the precision of start and end, in nanoseconds: 1s for the Common Log Format

	host       []byte // the virtual host, port and all; nil when the line names none
	target     []byte // the request-target as sent: "/a?b=c"; nil when the line has none
	status     int
	bytes      int64
	ua         []byte
	retryAfter int64 // the Retry-After the answer carried, in nanoseconds; -1 when the line records none
}

// Why a line could not be read. They are constants, so that a bad line
// allocates nothing.
const (
	badFormat  = "neither the Common nor the Combined Log Format, nor JSON"
	badTime    = "no time that can be read"
	badRequest = "no quoted request line"
	badStatus  = "no status"
	badBytes   = "no byte count"
	badJSON    = "malformed JSON"
	badTooLong = "longer than 64 KiB"
)

// A lineParser reads lines of any of the formats audit knows: JSON objects
// by their first byte, the others by the Common Log Format's shape.
type lineParser struct {
	clf  clfParser
	json jsonParser
}

// parse reads line into r, or says why it cannot.
func (p *lineParser) parse(line []byte, r *logRecord) (bad string) {
	*r = logRecord{retryAfter: -1}
	line = bytes.TrimSpace(line)
	if len(line) > 0 && line[0] == '{' {
		bad = p.json.parse(line, r)
	} else {
		bad = p.clf.parse(line, r)
	}
	if bad == "" {
		splitTarget(r)
	}
	return bad
}

// splitTarget reduces an absolute-form request-target, "http://host/p?q",
// to its path and query, taking its host when the line names none.
func splitTarget(r *logRecord) {
	t := r.target
	var rest []byte
	switch {
	case len(t) > 7 && asciiEqualFold(t[:7], "http://"):
		rest = t[7:]
	case len(t) > 8 && asciiEqualFold(t[:8], "https://"):
		rest = t[8:]
	default:
		return
	}
	authority, path := rest, []byte("/")
	if i := bytes.IndexAny(rest, "/?"); i >= 0 {
		authority, path = rest[:i], rest[i:]
		if path[0] == '?' {
			path = append([]byte("/"), path...)
		}
	}
	if r.host == nil {
		r.host = authority
	}
	r.target = path
}

func asciiEqualFold(b []byte, lowerASCII string) bool {
	if len(b) != len(lowerASCII) {
		return false
	}
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lowerASCII[i] {
			return false
		}
	}
	return true
}

// isRobotsPath reports whether the request-target is /robots.txt, whatever
// its query.
func isRobotsPath(target []byte) bool {
	if i := bytes.IndexByte(target, '?'); i >= 0 {
		target = target[:i]
	}
	return string(target) == "/robots.txt"
}

// hostName returns the host of a virtual host field, lower-cased, without
// its port or brackets: "example.com" for "Example.COM:443", "::1" for
// "[::1]:80".
func hostName(raw []byte) string {
	h := raw
	if len(h) > 0 && h[0] == '[' {
		if i := bytes.IndexByte(h, ']'); i > 0 {
			h = h[1:i]
		}
	} else if i := bytes.LastIndexByte(h, ':'); i >= 0 && bytes.IndexByte(h[:i], ':') < 0 {
		h = h[:i] // host:port; an address with several colons is IPv6, and has no port
	}
	return string(lower(nil, h))
}

// durationNanos reads a number of seconds, fractions allowed, such as a
// JSON duration or Retry-After field: "0.250" is 250ms. ok is false for
// anything else.
func durationNanos(s []byte) (d int64, res int64, ok bool) {
	secs, frac, digits, ok := decimal(s)
	if !ok || secs > 1<<33 { // past two centuries, seconds overflow nanoseconds
		return 0, 0, false
	}
	return secs*int64(time.Second) + frac, pow10Nanos(digits), true
}

// decimal reads s, "123" or "123.456", as whole seconds and the fraction's
// nanoseconds, with how many digits the fraction had.
func decimal(s []byte) (secs, fracNanos int64, digits int, ok bool) {
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		if secs > 1<<59 {
			return 0, 0, 0, false
		}
		secs = secs*10 + int64(s[i]-'0')
		i++
	}
	if i == 0 {
		return 0, 0, 0, false
	}
	if i < len(s) && s[i] == '.' {
		var n int
		fracNanos, digits, n = fraction(s[i+1:])
		i += 1 + n
	}
	return secs, fracNanos, digits, i == len(s)
}

// fraction reads the digits of a decimal fraction of a second, those
// after the point, as nanoseconds, and says how many digits it had; digits
// past the ninth are read and dropped.
func fraction(s []byte) (nanos int64, digits int, n int) {
	scale := int64(time.Second)
	for n < len(s) && '0' <= s[n] && s[n] <= '9' {
		if n < 9 {
			scale /= 10
			nanos += int64(s[n]-'0') * scale
		}
		n++
	}
	return nanos, n, n
}

// pow10Nanos returns the precision of a time with digits decimal places
// of a second: 1s for none, 1ms for three, 1ns for nine or more.
func pow10Nanos(digits int) int64 {
	r := int64(time.Second)
	for ; digits > 0 && r > 1; digits-- {
		r /= 10
	}
	return r
}
