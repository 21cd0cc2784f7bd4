package polite

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/polite-go/polite/pace"
)

// FuzzParseRetryAfter feeds parseRetryAfter arbitrary Retry-After and Date
// field values. The seed corpus is in testdata/fuzz/FuzzParseRetryAfter.
func FuzzParseRetryAfter(f *testing.F) {
	now := time.Date(2026, time.May, 4, 7, 28, 10, 0, time.UTC)
	f.Fuzz(func(t *testing.T, value, date string) {
		h := http.Header{}
		h.Set("Retry-After", value)
		if date != "" {
			h.Set("Date", date)
		}
		d, ok := parseRetryAfter(h, now)
		if !ok && d != 0 {
			t.Fatalf("parseRetryAfter(%q, Date %q) = %v, false; want 0 with false", value, date, d)
		}
		if d < 0 || d > pace.MaxPause {
			t.Fatalf("parseRetryAfter(%q, Date %q) = %v; want it in [0, %v]", value, date, d, pace.MaxPause)
		}

		v := strings.TrimSpace(value)
		switch {
		case isDigits(v):
			// delay-seconds: n seconds, capped, whatever the Date header.
			want := pace.MaxPause
			if n := strings.TrimLeft(v, "0"); len(n) <= 4 {
				s, _ := strconv.Atoi("0" + n)
				want = min(time.Duration(s)*time.Second, pace.MaxPause)
			}
			if d != want || !ok {
				t.Fatalf("parseRetryAfter(%q, Date %q) = %v, %v; want %v, true", value, date, d, ok, want)
			}
			return
		case v == "" || v[0] == '+' || v[0] == '-':
			// Blank, or a signed number: no HTTP-date starts with a sign.
			if ok {
				t.Fatalf("parseRetryAfter(%q, Date %q) = %v, true; want 0, false", value, date, d)
			}
			return
		case !ok:
			if _, isDate := parseHTTPDate(v); isDate {
				t.Fatalf("parseRetryAfter(%q, Date %q) = 0, false, but %q is an HTTP-date", value, date, v)
			}
			return
		}

		// An HTTP-date.
		at, isDate := parseHTTPDate(v)
		if !isDate {
			t.Fatalf("parseRetryAfter(%q, Date %q) = %v, true, but %q is neither digits nor an HTTP-date", value, date, d, v)
		}
		// The same instant as an IMF-fixdate gives the same delay, but for
		// a fraction of a second, which time.Parse accepts and an
		// IMF-fixdate cannot carry.
		h2 := h.Clone()
		h2.Set("Retry-After", at.UTC().Format(http.TimeFormat))
		if d2, ok2 := parseRetryAfter(h2, now); !ok2 || (d-d2).Abs() >= time.Second {
			t.Fatalf("parseRetryAfter(%q, Date %q) = %v, but its IMF-fixdate %q gives %v, %v",
				value, date, d, h2.Get("Retry-After"), d2, ok2)
		}
		// A usable Date header makes the local clock irrelevant; without
		// one, a later clock never lengthens the delay.
		later, _ := parseRetryAfter(h, now.Add(time.Hour))
		if _, hasDate := parseHTTPDate(date); hasDate && later != d {
			t.Fatalf("parseRetryAfter(%q, Date %q) = %v at %v but %v an hour later", value, date, d, now, later)
		}
		if later > d {
			t.Fatalf("parseRetryAfter(%q, Date %q) = %v at %v but %v an hour later", value, date, d, now, later)
		}
	})
}

// isDigits reports whether s is one or more ASCII digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
