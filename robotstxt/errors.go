package robotstxt

import (
	"errors"
	"fmt"
)

// MaxPathLength is the longest path, query included, in octets of its
// normal form (see the package doc, "Matching"), that a [Group] with rules
// decides. The cost of a decision grows with the path, and this bounds it
// (the package doc, "Cost"). Real URLs are far shorter: Scrapy drops URLs
// longer than 2,083 octets by default (URLLENGTH_LIMIT), the length that
// Internet Explorer allowed, and Apache and nginx refuse request lines
// past about 8 KiB by default (LimitRequestLine 8190;
// large_client_header_buffers 8k). Google's matcher (google/robotstxt)
// and temoto/robotstxt decide a path of any length; Google cuts a line of
// robots.txt at 2,083 × 8 = 16,664 octets.
const MaxPathLength = 8 << 10

// ErrPathTooLong is matched, with [errors.Is], by the error of a decision
// on a path longer than [MaxPathLength].
var ErrPathTooLong = errors.New("robotstxt: path too long to decide")

// ErrTooComplex is matched, with [errors.Is], by the error of a decision
// that would cost more than the engine spends on one: on a file written to
// make the engine work, not on a real one (the package doc, "Cost").
var ErrTooComplex = errors.New("robotstxt: rules too complex to decide the path")

// A DecideError is returned for a path that the engine does not decide.
// Its Err is [ErrPathTooLong] or [ErrTooComplex].
type DecideError struct {
	// Length is the path's length in octets, with its query, as given.
	Length int
	// Err says why the path was not decided.
	Err error
}

// Error implements the error interface.
func (e *DecideError) Error() string {
	if e.Err == ErrTooComplex {
		return fmt.Sprintf("robotstxt: a path of %d octets is not decided: its group's rules would cost more than a decision may", e.Length)
	}
	return fmt.Sprintf("robotstxt: a path of %d octets is not decided: longer than %d in normal form", e.Length, MaxPathLength)
}

// Unwrap returns Err.
func (e *DecideError) Unwrap() error { return e.Err }
