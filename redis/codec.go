package politeredis

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/polite-go/polite"
)

// robotsVersion is the first byte of an encoded copy; a copy of another
// version does not decode.
const robotsVersion = 1

// encodeRobots encodes a copy of a robots.txt fetch for Redis: every field
// but Expires, which Redis keeps as a time of its own clock, and Err, of
// which it keeps the text. Strings and the body are length-prefixed; a nil
// body is told from an empty one.
func encodeRobots(f *polite.RobotsFetch) []byte {
	errText := ""
	if f.Err != nil {
		errText = f.Err.Error()
	}
	b := make([]byte, 0, 64+len(f.URL)+len(f.Body)+len(errText)+len(f.ETag)+len(f.LastModified))
	b = append(b, robotsVersion)
	b = binary.AppendUvarint(b, uint64(f.Status))
	b = appendString(b, f.URL)
	if f.Body == nil {
		b = append(b, 0)
	} else {
		b = append(b, 1)
		b = appendString(b, string(f.Body))
	}
	b = appendString(b, errText)
	if f.Stale {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	b = appendString(b, f.ETag)
	b = appendString(b, f.LastModified)
	b = binary.AppendVarint(b, f.FetchedAt.UnixNano())
	b = binary.AppendVarint(b, int64(f.Duration))
	return b
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// errCorrupt is the error of a copy that does not decode.
var errCorrupt = errors.New("politeredis: a robots.txt copy in redis does not decode")

// decodeRobots decodes what encodeRobots encoded; Expires is left zero, and
// Err is an error with the text encoded.
func decodeRobots(b []byte) (*polite.RobotsFetch, error) {
	d := decoder{b: b}
	if d.byte() != robotsVersion {
		return nil, errCorrupt
	}
	f := &polite.RobotsFetch{}
	f.Status = int(d.uvarint())
	f.URL = d.string()
	if d.byte() == 1 {
		f.Body = []byte(d.string())
	}
	if s := d.string(); s != "" {
		f.Err = errors.New(s)
	}
	f.Stale = d.byte() == 1
	f.ETag = d.string()
	f.LastModified = d.string()
	f.FetchedAt = time.Unix(0, d.varint())
	f.Duration = time.Duration(d.varint())
	if d.bad || len(d.b) != 0 {
		return nil, errCorrupt
	}
	return f, nil
}

// decoder reads an encoded copy; bad records that it ran short or read
// nonsense, after which it reads zeros.
type decoder struct {
	b   []byte
	bad bool
}

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.bad = true
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.bad, d.b = true, nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.bad, d.b = true, nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) string() string {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.bad, d.b = true, nil
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}
