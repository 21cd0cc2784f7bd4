package polite

import (
	"net/http"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	// The server's clock says 07:28:00; ours is 10s ahead.
	serverNow := time.Date(2026, time.May, 4, 7, 28, 0, 0, time.UTC)
	localNow := serverNow.Add(10 * time.Second)
	const date = "Mon, 04 May 2026 07:28:00 GMT"

	tests := []struct {
		name   string
		values []string // Retry-After field values
		date   string   // Date header; "" for none
		want   time.Duration
		wantOK bool
	}{
		{"absent", nil, date, 0, false},
		{"empty", []string{""}, date, 0, false},
		{"blank", []string{"   "}, date, 0, false},
		{"delay-seconds", []string{"120"}, date, 120 * time.Second, true},
		{"delay-seconds with spaces", []string{" 120 "}, date, 120 * time.Second, true},
		{"delay-seconds with leading zeros", []string{"007"}, date, 7 * time.Second, true},
		{"only the first value counts", []string{"30", "90"}, date, 30 * time.Second, true},
		{"zero", []string{"0"}, date, 0, true},
		{"negative", []string{"-5"}, date, 0, false},
		{"fraction", []string{"1.5"}, date, 0, false},
		{"garbage", []string{"abc"}, date, 0, false},
		{"plus sign", []string{"+7"}, date, 0, false},
		{"exponent", []string{"1e3"}, date, 0, false},
		{"hex", []string{"0x10"}, date, 0, false},
		{"underscore", []string{"1_000"}, date, 0, false},
		{"unit", []string{"10s"}, date, 0, false},
		{"list", []string{"10, 20"}, date, 0, false},
		{"just under the cap", []string{"3599"}, date, 3599 * time.Second, true},
		{"at the cap", []string{"3600"}, date, time.Hour, true},
		{"a day", []string{"86400"}, date, time.Hour, true},
		{"overflows uint64", []string{"99999999999999999999"}, date, time.Hour, true},
		{"overflow then garbage", []string{"20000000000000000000A"}, date, 0, false},
		{"RFC 850 with another zone", []string{"Monday, 04-May-26 07:28:30 PST"}, date, 0, false},
		{"max uint64", []string{"18446744073709551615"}, date, time.Hour, true},
		{"overflows Duration", []string{"9223372036854775807"}, date, time.Hour, true},

		{"IMF-fixdate", []string{"Mon, 04 May 2026 07:28:30 GMT"}, date, 30 * time.Second, true},
		{"RFC 850", []string{"Monday, 04-May-26 07:28:30 GMT"}, date, 30 * time.Second, true},
		{"asctime", []string{"Mon May  4 07:28:30 2026"}, date, 30 * time.Second, true},
		{"RFC 1123 with UTC", []string{"Mon, 04 May 2026 07:28:30 UTC"}, date, 30 * time.Second, true},
		{"Date header with UTC", []string{"Mon, 04 May 2026 07:28:30 GMT"}, "Mon, 04 May 2026 07:28:00 UTC", 30 * time.Second, true},
		{"no Date header: against now", []string{"Mon, 04 May 2026 07:28:30 GMT"}, "", 20 * time.Second, true},
		{"bad Date header: against now", []string{"Mon, 04 May 2026 07:28:30 GMT"}, "yesterday", 20 * time.Second, true},
		{"date in the past", []string{"Mon, 04 May 2026 07:27:00 GMT"}, date, 0, true},
		{"date two hours ahead", []string{"Mon, 04 May 2026 09:28:00 GMT"}, date, time.Hour, true},
		{"date with another zone", []string{"Mon, 04 May 2026 07:28:30 PST"}, date, 0, false},
		{"date with a numeric zone", []string{"Mon, 04 May 2026 07:28:30 +0000"}, date, 0, false},
		{"date without a zone", []string{"Mon, 04 May 2026 07:28:30"}, date, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for _, v := range tc.values {
				h.Add("Retry-After", v)
			}
			if tc.date != "" {
				h.Set("Date", tc.date)
			}
			got, ok := parseRetryAfter(h, localNow)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("parseRetryAfter(Retry-After: %q, Date: %q) = %v, %v; want %v, %v",
					tc.values, tc.date, got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestParseRetryAfterNilHeader(t *testing.T) {
	if d, ok := parseRetryAfter(nil, time.Now()); d != 0 || ok {
		t.Errorf("parseRetryAfter(nil) = %v, %v; want 0, false", d, ok)
	}
}
