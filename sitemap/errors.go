package sitemap

import (
	"errors"
	"fmt"
)

// The errors that end the reading of a file. A [Reader] returns them
// inside a [*ReadError], so test for them with [errors.Is].
var (
	// ErrNotSitemap: the file is not a sitemap, an index or a feed (an
	// HTML page, an XML document with another root element), or a text
	// file with no absolute http(s) URL on any line.
	ErrNotSitemap = errors.New("sitemap: not a sitemap")
	// ErrMalformed: the XML or the gzip stream is broken or cut short.
	// The entries before the fault have been yielded.
	ErrMalformed = errors.New("sitemap: malformed or truncated")
	// ErrTooLarge: the file is longer than Limits.MaxBytes, as received or
	// decompressed.
	ErrTooLarge = errors.New("sitemap: larger than the limit")
	// ErrTooMany: the file lists more entries than Limits.MaxURLs, or a
	// walk comes to more sitemaps than Limits.MaxSitemaps.
	ErrTooMany = errors.New("sitemap: more entries than the limit")
)

// ErrStatus is matched, with [errors.Is], by the [*StatusError] of a
// sitemap fetch whose response was not a success.
var ErrStatus = errors.New("sitemap: response status is not 2xx")

// A ReadError says why a Reader stopped before the end of a file.
type ReadError struct {
	// Line is the line of the file where the reading stopped, from 1.
	Line int
	// Err is ErrNotSitemap, ErrMalformed, ErrTooLarge or ErrTooMany; or the
	// error of the body itself, such as a connection cut or a context
	// cancelled.
	Err error
	// Detail says more: "root element <html>", the XML decoder's or the
	// gzip reader's message.
	Detail string
}

// Error implements the error interface.
func (e *ReadError) Error() string {
	msg := e.Err.Error()
	if !isSentinel(e.Err) {
		msg = "sitemap: reading: " + msg
	}
	if e.Detail != "" {
		return fmt.Sprintf("%s at line %d: %s", msg, e.Line, e.Detail)
	}
	return fmt.Sprintf("%s at line %d", msg, e.Line)
}

// Unwrap returns Err.
func (e *ReadError) Unwrap() error { return e.Err }

// isSentinel reports whether err is one of the package's sentinels.
func isSentinel(err error) bool {
	switch err {
	case ErrNotSitemap, ErrMalformed, ErrTooLarge, ErrTooMany:
		return true
	}
	return false
}

// A StatusError is the error of a sitemap fetch whose response was not a
// success (2xx). It matches [ErrStatus].
type StatusError struct {
	// URL is the sitemap's URL.
	URL string
	// StatusCode is the response's status code.
	StatusCode int
}

// Error implements the error interface.
func (e *StatusError) Error() string {
	return fmt.Sprintf("sitemap: %s: status %d", e.URL, e.StatusCode)
}

// Is reports whether target is [ErrStatus].
func (e *StatusError) Is(target error) bool { return target == ErrStatus }
