package polite

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/polite-go/polite/pace"
)

// parseRetryAfter reads Retry-After from h, measuring HTTP-dates against h's Date
// header (or now when it has none). ok is false when it is absent or unusable.
// A usable Retry-After-Ms, the milliseconds that OpenAI's and Azure's APIs
// send beside it, comes first.
//
// The value is delay-seconds or an HTTP-date in any of the three forms of
// RFC 9110 §5.6.7, and also RFC 1123 with the zone "UTC", which some servers
// send. Measuring a date against the server's own Date makes clock skew
// irrelevant. A date in the past gives 0; every result is capped at
// pace.MaxPause, as is a delay-seconds too large for any integer type.
// Anything else ("-5", "1.5", "+7") is unusable.
func parseRetryAfter(h http.Header, now time.Time) (d time.Duration, ok bool) {
	if v := h["Retry-After-Ms"]; len(v) > 0 {
		if d, ok := parseMillis(v[0]); ok {
			return d, true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if strings.Trim(v, "0123456789") == "" { // digits only: no sign, no fraction
		// ParseUint stops at the first digit that overflows, so it must see
		// nothing but digits: its only error is then ErrRange.
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n >= uint64(pace.MaxPause/time.Second) {
			return pace.MaxPause, true
		}
		return time.Duration(n) * time.Second, true
	}

	at, ok := parseHTTPDate(v)
	if !ok {
		return 0, false
	}
	if date, ok := parseHTTPDate(h.Get("Date")); ok {
		now = date
	}
	return min(max(at.Sub(now), 0), pace.MaxPause), true
}

// parseMillis reads a non-negative number of milliseconds, which may have a
// fraction ("200", "1.5"), capped at pace.MaxPause.
func parseMillis(v string) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" || strings.Trim(v, "0123456789.") != "" {
		return 0, false // no sign, no exponent, no "Inf" or "NaN"
	}
	ms, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, false
	}
	return min(secondsDuration(ms/1000), pace.MaxPause), true
}

// parseHTTPDate parses an HTTP-date (IMF-fixdate, RFC 850 or asctime), or
// RFC 1123 with the zone "UTC". Other zone names are refused rather than
// read by the local time zone's rules.
func parseHTTPDate(v string) (time.Time, bool) {
	v = strings.TrimSpace(v)
	// http.ParseTime reads an RFC 850 date's zone by the local time zone's
	// rules, whatever it is: take only GMT, and asctime, which has no zone
	// and no comma.
	if t, err := http.ParseTime(v); err == nil && (strings.HasSuffix(v, " GMT") || !strings.Contains(v, ",")) {
		return t, true
	}
	t, err := time.Parse(time.RFC1123, v)
	if err != nil || t.Location() != time.UTC {
		return time.Time{}, false
	}
	return t, true
}
