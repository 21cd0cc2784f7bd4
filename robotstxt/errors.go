package robotstxt

import (
	"errors"
	"fmt"
)

// MaxPathLength is the longest path, query included, in octets of its
// normal form (see the package doc, "Matching"), that a [Group] with rules
// decides: 32 KiB, more than the longest line of robots.txt that Google's
// matcher (google/robotstxt) reads, 2,083 × 8 = 16,664 octets, so that a
// path as long as any rule it reads is decided. A decision's time grows
// with the path (the package doc, "Cost"), and this bounds it. Real URLs
// are far shorter: Scrapy drops URLs longer than 2,083 octets by default
// (URLLENGTH_LIMIT), the length that Internet Explorer allowed, and Apache
// and nginx refuse request lines past about 8 KiB by default
// (LimitRequestLine 8190; large_client_header_buffers 8k).
const MaxPathLength = 32 << 10

// ErrPathTooLong is matched, with [errors.Is], by the error of a decision
// on a path longer than [MaxPathLength].
var ErrPathTooLong = errors.New("robotstxt: path too long to decide")

// ErrTooComplex is matched, with [errors.Is], by the error of a decision
// against a group whose rules are beyond what the engine decides within
// the time it states (the package doc, "Cost"), which [Group.Err] reports
// as soon as the group is bound: a group larger than a robots.txt of
// 500 KiB can hold, or, for [Group.Usage], one of more than 1,000 usage
// rules and lines.
var ErrTooComplex = errors.New("robotstxt: rules too complex to decide")

// A DecideError is returned for a path that the engine does not decide,
// and by [Group.Err]. Its Err is [ErrPathTooLong] or [ErrTooComplex].
type DecideError struct {
	// Length is the path's length in octets, with its query, as given; 0
	// in the error of Group.Err, which is of no path.
	Length int
	// Err says why the path was not decided.
	Err error
}

// Error implements the error interface.
func (e *DecideError) Error() string {
	switch {
	case e.Err == ErrTooComplex && e.Length == 0:
		return "robotstxt: the group's rules are beyond what the engine decides: no path is decided"
	case e.Err == ErrTooComplex:
		return fmt.Sprintf("robotstxt: a path of %d octets is not decided: its group's rules are beyond what the engine decides", e.Length)
	}
	return fmt.Sprintf("robotstxt: a path of %d octets is not decided: longer than %d in normal form", e.Length, MaxPathLength)
}

// Unwrap returns Err.
func (e *DecideError) Unwrap() error { return e.Err }
