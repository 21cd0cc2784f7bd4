package polite

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// parseQuota reads the rate-limit fields of h, measuring an epoch-seconds
// reset against h's Date header (or the clock when it has none). It knows three
// styles, and reads the first that h has:
//
//   - RateLimit and RateLimit-Policy (draft-ietf-httpapi-ratelimit-headers,
//     versions 08 and later): lists of items such as `"default";r=50;t=30`
//     and `"default";q=100;w=60`; of several items, the one that leaves the
//     fewest requests per second until its reset binds.
//   - RateLimit-Remaining, RateLimit-Reset and RateLimit-Limit (the
//     draft's versions up to 07): the reset in seconds from now.
//   - X-RateLimit-Remaining, X-RateLimit-Reset and X-RateLimit-Limit, as
//     many APIs send them: the reset in seconds from now, or, when it is
//     a number of seconds since 1970 (at least 10^9), as a time.
//
// A field that is missing, negative, not a number or not finite makes the
// whole style unusable; Known is then false. Callers cap the reset.
func parseQuota(h http.Header) Quota {
	// The headers are looked up by their canonical keys directly: this runs
	// on every response.
	if len(h) == 0 {
		return Quota{}
	}
	if v := h["Ratelimit"]; len(v) > 0 {
		return parseRateLimit(strings.Join(v, ","), strings.Join(h["Ratelimit-Policy"], ","))
	}
	if v := h["Ratelimit-Remaining"]; len(v) > 0 {
		return fieldQuota(v[0], h.Get("Ratelimit-Reset"), h.Get("Ratelimit-Limit"), h, false)
	}
	if v := h["X-Ratelimit-Remaining"]; len(v) > 0 {
		return fieldQuota(v[0], h.Get("X-Ratelimit-Reset"), h.Get("X-Ratelimit-Limit"), h, true)
	}
	return Quota{}
}

// fieldQuota reads the older styles: one field each for the remaining
// requests, the reset and the limit, which may be missing. epoch says
// whether a large reset may be a time in seconds since 1970.
func fieldQuota(remaining, reset, limit string, h http.Header, epoch bool) Quota {
	r, ok := parseCount(remaining)
	if !ok {
		return Quota{}
	}
	secs, ok := parseSeconds(reset)
	if !ok {
		return Quota{}
	}
	q := Quota{Known: true, Remaining: r, Reset: secondsDuration(secs)}
	if epoch && secs >= 1e9 {
		now, ok := parseHTTPDate(h.Get("Date"))
		if !ok {
			now = time.Now()
		}
		q.Reset = max(time.Unix(0, 0).Add(secondsDuration(secs)).Sub(now), 0)
	}
	if l, ok := parseCount(limit); ok {
		q.Limit = l
	}
	return q
}

// parseRateLimit reads the RateLimit field, and the quota of the binding
// item's policy from the RateLimit-Policy field.
func parseRateLimit(field, policies string) Quota {
	var best Quota
	var bestName string
	for item := range strings.SplitSeq(field, ",") {
		name, params := sfItem(item)
		r, okR := parseCount(params["r"])
		t, okT := parseSeconds(params["t"])
		if !okR || !okT {
			continue
		}
		q := Quota{Known: true, Remaining: r, Reset: secondsDuration(t)}
		if !best.Known || tighter(q, best) {
			best, bestName = q, name
		}
	}
	if !best.Known {
		return Quota{}
	}
	for item := range strings.SplitSeq(policies, ",") {
		if name, params := sfItem(item); name == bestName {
			if l, ok := parseCount(params["q"]); ok {
				best.Limit = l
			}
		}
	}
	return best
}

// tighter reports whether a leaves fewer requests per second until its
// reset than b.
func tighter(a, b Quota) bool {
	// a.remaining/a.reset < b.remaining/b.reset, without dividing by zero.
	return float64(a.Remaining)*b.Reset.Seconds() < float64(b.Remaining)*a.Reset.Seconds() ||
		a.Remaining == 0 && b.Remaining == 0 && a.Reset > b.Reset
}

// sfItem reads one item of a structured field list (RFC 8941 §3.1) as the
// rate-limit fields use it: a name, a string or a token, then parameters
// ";key=value". It is lenient: a malformed item gives what could be read.
func sfItem(item string) (name string, params map[string]string) {
	parts := strings.Split(item, ";")
	name = strings.Trim(strings.TrimSpace(parts[0]), `"`)
	params = make(map[string]string, len(parts)-1)
	for _, p := range parts[1:] {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		params[k] = v
	}
	return name, params
}

// parseCount reads a non-negative whole number.
func parseCount(v string) (int64, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	return n, err == nil && n >= 0
}

// parseSeconds reads a non-negative, finite number of seconds, which may
// have a fraction.
func parseSeconds(v string) (float64, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	return f, err == nil && f >= 0 && !math.IsInf(f, 0)
}

// secondsDuration converts seconds to a Duration, saturating.
func secondsDuration(secs float64) time.Duration {
	if secs >= float64(math.MaxInt64)/float64(time.Second) {
		return math.MaxInt64
	}
	return time.Duration(secs * float64(time.Second))
}
