// Package backoff is the command's own reading of when the transport backs
// a host off, and for how long: the statuses it backs off on, and the
// Retry-After header it honours, by the rules the package documentation of
// github.com/polite-go/polite states.
//
// It is written here rather than taken from package polite on purpose: the
// command judges the transport by it (the crawl's table, the demo's
// verdict), so it must not share the transport's code. The command's tests
// hold the two in agreement through the transport's Stats.
package backoff

import (
	"net/http"
	"strings"
	"time"
)

// MaxRetryAfter is the cap the transport puts on a Retry-After.
const MaxRetryAfter = time.Hour

// Status reports whether the transport backs off on status: 429 and every
// 5xx but 501 and 505.
func Status(status int) bool {
	return status == http.StatusTooManyRequests ||
		500 <= status && status <= 599 && status != http.StatusNotImplemented && status != http.StatusHTTPVersionNotSupported
}

// On reports whether the transport backs off on a response with status and
// header h: a Status, or any other 4xx or 5xx that has a Retry-After it can
// read.
func On(status int, h http.Header) bool {
	if Status(status) {
		return true
	}
	if status < 400 || status > 599 {
		return false
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	_, date := Date(v)
	return v != "" && (strings.Trim(v, "0123456789") == "" || date)
}

// RetryAfter returns the pause that the Retry-After header of h asks for,
// or 0 when there is none or it cannot be read.
//
// The value is delay-seconds, digits only ("+7", "-5" and "1.5" cannot be
// read), or an HTTP-date (see Date). A date is measured against the
// response's Date header, or against now without a usable one; a date in
// the past gives 0. Every result is capped at MaxRetryAfter, however many
// digits the seconds have.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if d, ok := Seconds(v); ok {
		return d
	}
	at, ok := Date(v)
	if !ok {
		return 0
	}
	if date, ok := Date(strings.TrimSpace(h.Get("Date"))); ok {
		now = date
	}
	return min(max(at.Sub(now), 0), MaxRetryAfter)
}

// Seconds reads v as delay-seconds, 1*DIGIT (RFC 9110 §10.2.3), capped at
// MaxRetryAfter. ok is false when v is not all digits.
func Seconds(v string) (d time.Duration, ok bool) {
	if v == "" {
		return 0, false
	}
	const limit = int64(MaxRetryAfter / time.Second)
	var n int64
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if n < limit { // past the cap the rest need only be digits
			n = n*10 + int64(c-'0')
		}
	}
	return time.Duration(min(n, limit)) * time.Second, true
}

// Date parses an HTTP-date in any of the three forms of RFC 9110 §5.6.7
// (IMF-fixdate, the obsolete RFC 850 form and asctime), or in the RFC 1123
// form with the zone "UTC", which some servers send. A zone other than GMT
// or UTC is refused: its meaning would depend on this machine's time zone.
func Date(v string) (time.Time, bool) {
	for _, layout := range []string{time.RFC1123, time.RFC850, time.ANSIC} {
		t, err := time.Parse(layout, v)
		if err != nil {
			continue
		}
		if layout == time.ANSIC { // no zone: GMT by definition
			return t, true
		}
		if name, offset := t.Zone(); offset == 0 && (name == "GMT" || name == "UTC") {
			return t, true
		}
		return time.Time{}, false
	}
	return time.Time{}, false
}
