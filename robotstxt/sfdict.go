package robotstxt

import (
	"errors"
	"unicode/utf8"
)

// errDictionary is why a statement of preference is not an RFC 9651
// Dictionary; sfError says where.
var errDictionary = errors.New("not a structured-field dictionary")

// sfError is a statement that does not parse: what was wrong, and at
// which octet.
type sfError struct {
	at  int
	why string
}

func (e *sfError) Error() string { return e.why }

func (e *sfError) Unwrap() error { return errDictionary }

// sfMember is a member of a Dictionary as preferences read it: its key,
// and its value when that is a Token; a value of any other type, an Inner
// List, or the Boolean true of a key without "=", leaves token empty.
// Parameters are parsed and dropped (draft-ietf-aipref-vocab-07 §6.5.2).
type sfMember struct {
	key, token string
}

// parseDictionary parses s as an RFC 9651 Dictionary (§4.2.2), to the
// whole of that section's syntax: every type of Bare Item, Inner Lists and
// Parameters. It calls member for each member in order, duplicates
// included, so that the caller keeps the last of a key (§4.2.2 overwrites
// a key's value). The key and token share s's memory. An empty s is the
// empty Dictionary.
func parseDictionary(s string, member func(sfMember)) error {
	p := sfParser{s: s}
	p.skipSP()
	if p.done() {
		return nil
	}
	for {
		key, err := p.key()
		if err != nil {
			return err
		}
		m := sfMember{key: key}
		if p.peek() == '=' {
			p.i++
			if p.peek() == '(' {
				err = p.innerList()
			} else {
				m.token, err = p.bareItem()
				if err == nil {
					err = p.parameters()
				}
			}
		} else {
			err = p.parameters() // the Boolean true
		}
		if err != nil {
			return err
		}
		member(m)
		p.skipOWS()
		if p.done() {
			return nil
		}
		if p.peek() != ',' {
			return p.fail("expected ',' after a member")
		}
		p.i++
		p.skipOWS()
		if p.done() {
			return p.fail("a ',' ends the dictionary")
		}
	}
}

// sfParser reads a structured field value octet by octet.
type sfParser struct {
	s string
	i int
}

func (p *sfParser) done() bool { return p.i >= len(p.s) }

// peek returns the next octet, or 0 at the end.
func (p *sfParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *sfParser) fail(why string) error { return &sfError{at: p.i, why: why} }

func (p *sfParser) skipSP() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

// skipOWS skips SP and HTAB, the white space around a Dictionary's commas.
func (p *sfParser) skipOWS() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// key parses a Key (§4.2.3.3): lcalpha or '*', then lcalpha, DIGIT, '_',
// '-', '.' or '*'.
func (p *sfParser) key() (string, error) {
	if c := p.peek(); !('a' <= c && c <= 'z' || c == '*') {
		return "", p.fail("a key must start with a-z or '*'")
	}
	from := p.i
	for p.i < len(p.s) && isKeyByte(p.s[p.i]) {
		p.i++
	}
	return p.s[from:p.i], nil
}

func isKeyByte(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.' || c == '*'
}

// parameters parses Parameters (§4.2.3.2), and drops them.
func (p *sfParser) parameters() error {
	for p.peek() == ';' {
		p.i++
		p.skipSP()
		if _, err := p.key(); err != nil {
			return err
		}
		if p.peek() == '=' {
			p.i++
			if _, err := p.bareItem(); err != nil {
				return err
			}
		}
	}
	return nil
}

// innerList parses an Inner List (§4.2.1.2) with its Parameters, and
// drops it.
func (p *sfParser) innerList() error {
	p.i++ // '('
	for {
		p.skipSP()
		switch p.peek() {
		case ')':
			p.i++
			return p.parameters()
		case 0:
			if p.done() {
				return p.fail("an inner list is not closed")
			}
		}
		if _, err := p.bareItem(); err != nil {
			return err
		}
		if err := p.parameters(); err != nil {
			return err
		}
		if c := p.peek(); c != ' ' && c != ')' {
			return p.fail("expected ' ' or ')' in an inner list")
		}
	}
}

// bareItem parses a Bare Item (§4.2.3.1) and returns its text when it is a
// Token, "" otherwise.
func (p *sfParser) bareItem() (token string, err error) {
	switch c := p.peek(); {
	case c == '-' || '0' <= c && c <= '9':
		_, err = p.number()
	case c == '"':
		err = p.str()
	case c == '*' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		token = p.token()
	case c == ':':
		err = p.byteSequence()
	case c == '?':
		err = p.boolean()
	case c == '@':
		p.i++
		var decimal bool
		if decimal, err = p.number(); err == nil && decimal {
			err = p.fail("a date must be an integer")
		}
	case c == '%':
		err = p.displayString()
	default:
		err = p.fail("not an item")
	}
	return token, err
}

// number parses an Integer or a Decimal (§4.2.4) and reports which.
func (p *sfParser) number() (decimal bool, err error) {
	if p.peek() == '-' {
		p.i++
	}
	if c := p.peek(); c < '0' || c > '9' {
		return false, p.fail("a number must have a digit")
	}
	n, point := 0, -1 // the number's characters, and where its '.' is
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case '0' <= c && c <= '9':
		case c == '.' && point < 0:
			if n > 12 {
				return false, p.fail("a decimal has more than 12 integer digits")
			}
			point = n
		default:
			goto end
		}
		p.i++
		n++
		if point < 0 && n > 15 {
			return false, p.fail("an integer has more than 15 digits")
		}
		if point >= 0 && n > 16 {
			return false, p.fail("a decimal has more than 16 characters")
		}
	}
end:
	if point >= 0 && (point == n-1 || n-1-point > 3) {
		return true, p.fail("a decimal must have 1 to 3 fraction digits")
	}
	return point >= 0, nil
}

// str parses a String (§4.2.5).
func (p *sfParser) str() error {
	p.i++ // '"'
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch {
		case c == '\\':
			if p.i == len(p.s) || p.s[p.i] != '"' && p.s[p.i] != '\\' {
				return p.fail("a string escapes other than '\"' or '\\'")
			}
			p.i++
		case c == '"':
			return nil
		case c < 0x20 || c > 0x7e:
			return p.fail("a string holds a control or non-ASCII octet")
		}
	}
	return p.fail("a string is not closed")
}

// token parses a Token (§4.2.6) and returns it.
func (p *sfParser) token() string {
	from := p.i
	p.i++
	for p.i < len(p.s) && (isTchar(p.s[p.i]) || p.s[p.i] == ':' || p.s[p.i] == '/') {
		p.i++
	}
	return p.s[from:p.i]
}

// isTchar reports whether c is a tchar of RFC 9110 §5.6.2.
func isTchar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}

// byteSequence parses a Byte Sequence (§4.2.7): base64 between colons,
// which must decode. As §4.2.7 advises, missing '=' padding and non-zero
// pad bits are accepted.
func (p *sfParser) byteSequence() error {
	p.i++ // ':'
	from, pad := p.i, 0
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch {
		case c == ':':
			if n := p.i - 1 - from - pad; pad > 2 || n%4 == 1 {
				return p.fail("a byte sequence is not base64")
			}
			return nil
		case c == '=':
			pad++
		case pad > 0:
			return p.fail("a byte sequence has '=' before its end")
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '+', c == '/':
		default:
			return p.fail("a byte sequence holds an octet that is not base64")
		}
	}
	return p.fail("a byte sequence is not closed")
}

// boolean parses a Boolean (§4.2.8).
func (p *sfParser) boolean() error {
	p.i++ // '?'
	if c := p.peek(); c != '0' && c != '1' {
		return p.fail("a boolean must be ?0 or ?1")
	}
	p.i++
	return nil
}

// displayString parses a Display String (§4.2.10): percent-encoded UTF-8
// between %" and ".
func (p *sfParser) displayString() error {
	p.i++ // '%'
	if p.peek() != '"' {
		return p.fail("a display string must start with %\"")
	}
	p.i++
	var buf []byte // the decoded octets, when one is encoded
	plain := p.i   // start of the run not yet copied to buf
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '%':
			if p.i+2 >= len(p.s) || !isLowerHex(p.s[p.i+1]) || !isLowerHex(p.s[p.i+2]) {
				return p.fail("a display string's escape must be two lower-case hex digits")
			}
			buf = append(buf, p.s[plain:p.i]...)
			buf = append(buf, unhex(p.s[p.i+1])<<4|unhex(p.s[p.i+2]))
			p.i += 3
			plain = p.i
			continue
		case c == '"':
			valid := buf == nil || utf8.Valid(append(buf, p.s[plain:p.i]...))
			p.i++
			if !valid {
				return p.fail("a display string is not UTF-8")
			}
			return nil
		case c < 0x20 || c > 0x7e:
			return p.fail("a display string holds a control or non-ASCII octet")
		}
		p.i++
	}
	return p.fail("a display string is not closed")
}

func isLowerHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }
