package audit

import (
	"bytes"
	"time"
)

// A clfParser reads the Common Log Format,
//
//	host ident user [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.1" 200 2326
//
// and the Combined Log Format, which adds the quoted Referer and
// User-Agent, each with or without a virtual host in front: nginx's
// "$host $remote_addr - ...", Apache's vhost_combined "%v:%p %h %l %u
// ...". Fields after the User-Agent are ignored. The time, to the second,
// is taken as the request's start, as Apache's %t is.
type clfParser struct {
	lastTime [26]byte // the last time read, and its value: lines of one second share it
	lastUnix int64
	haveLast bool
}

func (p *clfParser) parse(line []byte, r *logRecord) (bad string) {
	open := bytes.IndexByte(line, '[')
	if open < 0 {
		return badFormat
	}
	var fields [4][]byte
	n := 0
	for pre := skipSpaces(line[:open]); len(pre) > 0; pre = skipSpaces(pre) {
		if n == len(fields) {
			return badFormat
		}
		end := bytes.IndexByte(pre, ' ')
		if end < 0 {
			end = len(pre)
		}
		fields[n], pre = pre[:end], pre[end:]
		n++
	}
	switch n {
	case 3:
	case 4:
		r.host = fields[0]
	default:
		return badFormat
	}

	rest := line[open+1:]
	if len(rest) < 27 || rest[26] != ']' {
		return badTime
	}
	stamp := rest[:26]
	if !p.haveLast || string(stamp) != string(p.lastTime[:]) {
		t, ok := parseCLFTime(stamp)
		if !ok {
			return badTime
		}
		copy(p.lastTime[:], stamp)
		p.lastUnix, p.haveLast = t, true
	}
	r.start, r.end, r.res = p.lastUnix, p.lastUnix, int64(time.Second)

	rest = skipSpaces(rest[27:])
	req, rest, ok := quoted(rest)
	if !ok {
		return badRequest
	}
	r.target = requestTarget(req)

	rest = skipSpaces(rest)
	status, n := leadingInt(rest)
	if n != 3 {
		return badStatus
	}
	r.status = int(status)
	rest = skipSpaces(rest[n:])
	switch b, n := leadingInt(rest); {
	case n > 0:
		r.bytes, rest = b, rest[n:]
	case len(rest) > 0 && rest[0] == '-':
		rest = rest[1:]
	default:
		return badBytes
	}

	// The Combined Log Format's Referer and User-Agent, when present.
	rest = skipSpaces(rest)
	if _, after, ok := quoted(rest); ok {
		if ua, _, ok := quoted(skipSpaces(after)); ok {
			r.ua = ua
		}
	}
	return ""
}

// requestTarget returns the request-target of a request line, "GET /a
// HTTP/1.1", or nil when the line has none, as "-" or a bare method.
func requestTarget(req []byte) []byte {
	sp := bytes.IndexByte(req, ' ')
	if sp < 0 {
		return nil
	}
	target := skipSpaces(req[sp+1:])
	if end := bytes.IndexByte(target, ' '); end >= 0 {
		target = target[:end]
	}
	if len(target) == 0 {
		return nil
	}
	return target
}

// quoted reads a double-quoted field at the start of b, in which a
// backslash escapes the next byte, and returns its content, as written,
// and what follows it.
func quoted(b []byte) (content, rest []byte, ok bool) {
	if len(b) == 0 || b[0] != '"' {
		return nil, b, false
	}
	for i := 1; ; {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			return nil, b, false
		}
		end := i + q
		backslashes := 0
		for end-backslashes-1 >= 1 && b[end-backslashes-1] == '\\' {
			backslashes++
		}
		if backslashes%2 == 0 {
			return b[1:end], b[end+1:], true
		}
		i = end + 1
	}
}

func skipSpaces(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	return b
}

// leadingInt reads the decimal digits at the start of b, and how many
// there were; it stops before overflowing.
func leadingInt(b []byte) (v int64, n int) {
	for n < len(b) && '0' <= b[n] && b[n] <= '9' && v < 1<<58 {
		v = v*10 + int64(b[n]-'0')
		n++
	}
	return v, n
}
