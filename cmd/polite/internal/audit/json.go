package audit

import (
	"bytes"
	"time"
	"unicode/utf8"

	"github.com/polite-go/polite/cmd/polite/internal/backoff"
)

// A jsonParser reads one JSON object a line, byte by byte, looking only
// at the keys of its tree and skipping the rest.
type jsonParser struct {
	root    *jsonNode
	vals    [numJSONFields][]byte
	strs    [numJSONFields]bool
	ranks   [numJSONFields]uint8
	scratch [numJSONFields][]byte // decoded strings that had escapes
}

const maxJSONDepth = 32

func (p *jsonParser) parse(line []byte, r *logRecord) (bad string) {
	if p.root == nil {
		p.root = newJSONTree(nil)
	}
	for i := range p.ranks {
		p.ranks[i], p.vals[i] = 255, nil
	}
	end, ok := p.value(line, 0, p.root, 0)
	if !ok || len(bytes.TrimSpace(line[end:])) > 0 {
		return badJSON
	}
	return p.record(r)
}

// record fills r from the fields found.
func (p *jsonParser) record(r *logRecord) (bad string) {
	v := &p.vals
	if v[fieldTime] == nil {
		return "no time field (see -fields)"
	}
	t, res, ok := jsonTime(v[fieldTime], p.strs[fieldTime])
	if !ok {
		return badTime
	}
	r.start, r.end, r.res = t, t, res
	if v[fieldDuration] != nil {
		if d, dres, ok := durationNanos(v[fieldDuration]); ok {
			r.start -= d
			r.res += dres
		}
	}
	switch {
	case v[fieldPath] != nil:
		r.target = v[fieldPath]
	case v[fieldRequest] != nil && p.strs[fieldRequest]:
		r.target = requestTarget(v[fieldRequest])
	default:
		return "no request or path field (see -fields)"
	}
	r.ua, r.host = v[fieldUA], v[fieldHost]
	if s := v[fieldStatus]; s != nil {
		st, n := leadingInt(s)
		if n != len(s) || n == 0 {
			return badStatus
		}
		r.status = int(st)
	}
	if b := v[fieldBytes]; b != nil {
		if n, k := leadingInt(b); k == len(b) {
			r.bytes = n
		}
	}
	if ra := v[fieldRetryAfter]; len(ra) > 0 {
		if d, ok := backoff.Seconds(string(ra)); ok {
			r.retryAfter = int64(d)
		} else if at, ok := backoff.Date(string(ra)); ok {
			r.retryAfter = max(at.UnixNano()-r.end, 0)
		}
	}
	return ""
}

// jsonTime reads a time field: Unix seconds as a number or a string of
// digits (milliseconds, microseconds or nanoseconds when it is too large
// for seconds: 11 to 14 digits, 15 to 17, more), RFC 3339, or the Common
// Log Format's time.
func jsonTime(b []byte, str bool) (t, res int64, ok bool) {
	if secs, frac, digits, ok := decimal(b); ok {
		switch {
		case secs < 1e10:
			return secs*int64(time.Second) + frac, pow10Nanos(digits), true
		case digits > 0:
			return 0, 0, false
		case secs < 1e14:
			return secs * int64(time.Millisecond), int64(time.Millisecond), true
		case secs < 1e17:
			return secs * int64(time.Microsecond), int64(time.Microsecond), true
		}
		return secs, 1, true
	}
	if !str {
		return 0, 0, false
	}
	if len(b) == 26 {
		if t, ok := parseCLFTime(b); ok {
			return t, int64(time.Second), true
		}
	}
	return parseRFC3339(b)
}

// value reads the JSON value at b[i], recording it when node holds a
// field, and returns the index after it.
func (p *jsonParser) value(b []byte, i int, node *jsonNode, depth int) (int, bool) {
	i = jsonSpace(b, i)
	if i >= len(b) || depth > maxJSONDepth {
		return 0, false
	}
	switch b[i] {
	case '"':
		s, next, ok := jsonString(b, i)
		if ok && node != nil && node.field != fieldNone {
			p.set(node, s, true)
		}
		return next, ok
	case '{':
		return p.object(b, i, node, depth)
	case '[': // its first element stands for it
		return jsonMembers(b, i, ']', func(i, n int) (int, bool) {
			if n > 0 {
				return p.value(b, i, nil, depth+1)
			}
			return p.value(b, i, node, depth+1)
		})
	}
	j := i
	for j < len(b) && !jsonDelim(b[j]) {
		j++
	}
	if j == i {
		return 0, false
	}
	if node != nil && node.field != fieldNone && string(b[i:j]) != "null" {
		p.set(node, b[i:j], false)
	}
	return j, true
}

// object reads the object at b[i].
func (p *jsonParser) object(b []byte, i int, node *jsonNode, depth int) (int, bool) {
	return jsonMembers(b, i, '}', func(i, _ int) (int, bool) {
		key, next, ok := jsonString(b, i)
		if !ok {
			return 0, false
		}
		i = jsonSpace(b, next)
		if i >= len(b) || b[i] != ':' {
			return 0, false
		}
		var child *jsonNode
		if node != nil {
			child = node.children[string(key)]
		}
		return p.value(b, i+1, child, depth+1)
	})
}

// jsonMembers reads the members of the array or object at b[i], which
// ends at closer: each with member, which reads the nth from i, after any
// space, and returns the index after it.
func jsonMembers(b []byte, i int, closer byte, member func(i, n int) (int, bool)) (int, bool) {
	i = jsonSpace(b, i+1)
	if i < len(b) && b[i] == closer {
		return i + 1, true
	}
	for n := 0; ; n++ {
		var ok bool
		if i, ok = member(jsonSpace(b, i), n); !ok {
			return 0, false
		}
		i = jsonSpace(b, i)
		switch {
		case i < len(b) && b[i] == ',':
			i++
		case i < len(b) && b[i] == closer:
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// set records a field's value, raw or a string's content, when no key of
// a lower rank gave it already.
func (p *jsonParser) set(node *jsonNode, v []byte, str bool) {
	f := node.field
	if node.rank >= p.ranks[f] {
		return
	}
	if str && bytes.IndexByte(v, '\\') >= 0 {
		p.scratch[f] = unescapeJSON(p.scratch[f][:0], v)
		v = p.scratch[f]
	}
	p.vals[f], p.strs[f], p.ranks[f] = v, str, node.rank
}

// jsonString returns the content of the string at b[i], escapes undecoded,
// and the index after it.
func jsonString(b []byte, i int) (s []byte, next int, ok bool) {
	if i >= len(b) {
		return nil, 0, false
	}
	s, rest, ok := quoted(b[i:])
	return s, len(b) - len(rest), ok
}

// unescapeJSON appends the decoded content of a JSON string to dst.
func unescapeJSON(dst, s []byte) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			dst = append(dst, c)
			continue
		}
		i++
		switch s[i] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, n := jsonRune(s[i+1:])
			dst = utf8.AppendRune(dst, r)
			i += n
		default: // '"', '\\', '/'
			dst = append(dst, s[i])
		}
	}
	return dst
}

// jsonRune reads the hex digits after "\u", a surrogate pair's second half
// included, and how many bytes it read.
func jsonRune(s []byte) (rune, int) {
	r, ok := hex4(s)
	if !ok {
		return utf8.RuneError, 0
	}
	if 0xD800 <= r && r < 0xDC00 && len(s) >= 10 && s[4] == '\\' && s[5] == 'u' {
		if lo, ok := hex4(s[6:]); ok && 0xDC00 <= lo && lo < 0xE000 {
			return (r-0xD800)<<10 | (lo - 0xDC00) + 0x10000, 10
		}
	}
	return r, 4
}

func hex4(s []byte) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

func jsonSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

func jsonDelim(c byte) bool {
	return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\r' || c == '\n'
}
