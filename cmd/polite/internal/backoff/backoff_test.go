package backoff

import (
	"net/http"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	date := now.Add(-time.Hour).Format(http.TimeFormat) // the server's clock is an hour behind
	gmt, pst := time.FixedZone("GMT", 0), time.FixedZone("PST", -8*3600)
	tests := []struct {
		name   string
		header http.Header
		want   time.Duration
	}{
		{"none", http.Header{}, 0},
		{"seconds", http.Header{"Retry-After": {"8"}}, 8 * time.Second},
		{"spaces", http.Header{"Retry-After": {" 8 "}}, 8 * time.Second},
		{"leading zeros", http.Header{"Retry-After": {"0008"}}, 8 * time.Second},
		{"zero", http.Header{"Retry-After": {"0"}}, 0},
		{"plus sign", http.Header{"Retry-After": {"+8"}}, 0},
		{"negative", http.Header{"Retry-After": {"-5"}}, 0},
		{"fraction", http.Header{"Retry-After": {"8.5"}}, 0},
		{"capped", http.Header{"Retry-After": {"99999"}}, time.Hour},
		{"too large for any integer", http.Header{"Retry-After": {"99999999999999999999"}}, time.Hour},
		{"junk", http.Header{"Retry-After": {"soon"}}, 0},
		{"junk after digits", http.Header{"Retry-After": {"99999x"}}, 0},
		{"date against now", http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second},
		{"date against Date", http.Header{"Retry-After": {now.Add(-time.Hour + 30*time.Second).Format(http.TimeFormat)}, "Date": {date}}, 30 * time.Second},
		{"date in the past", http.Header{"Retry-After": {now.Add(-time.Minute).Format(http.TimeFormat)}}, 0},
		{"date beyond the cap", http.Header{"Retry-After": {now.Add(2 * time.Hour).Format(http.TimeFormat)}}, time.Hour},
		{"RFC 850 date", http.Header{"Retry-After": {now.Add(90 * time.Second).In(gmt).Format(time.RFC850)}}, 90 * time.Second},
		{"asctime date", http.Header{"Retry-After": {now.Add(90 * time.Second).Format(time.ANSIC)}}, 90 * time.Second},
		{"RFC 1123 date in UTC", http.Header{"Retry-After": {now.Add(90 * time.Second).Format(time.RFC1123)}}, 90 * time.Second},
		{"RFC 1123 date in PST", http.Header{"Retry-After": {now.Add(90 * time.Second).In(pst).Format(time.RFC1123)}}, 0},
		{"RFC 850 date in PST", http.Header{"Retry-After": {now.Add(90 * time.Second).In(pst).Format(time.RFC850)}}, 0},
		{"date with an offset", http.Header{"Retry-After": {now.Add(90 * time.Second).Format(time.RFC1123Z)}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RetryAfter(tt.header, now); got != tt.want {
				t.Errorf("RetryAfter(%q) = %v; want %v", tt.header, got, tt.want)
			}
		})
	}
}

func TestSeconds(t *testing.T) {
	tests := []struct {
		v    string
		want time.Duration
		ok   bool
	}{
		{"0", 0, true},
		{"30", 30 * time.Second, true},
		{"3600", time.Hour, true},
		{"3601", time.Hour, true},
		{"", 0, false},
		{"1.5", 0, false},
		{" 5", 0, false},
	}
	for _, tt := range tests {
		if got, ok := Seconds(tt.v); got != tt.want || ok != tt.ok {
			t.Errorf("Seconds(%q) = %v, %v; want %v, %v", tt.v, got, ok, tt.want, tt.ok)
		}
	}
}

// TestOn checks the statuses the transport backs off on: by themselves
// (Status), or with a Retry-After it can read (On).
func TestOn(t *testing.T) {
	tests := []struct {
		status     int
		retryAfter string
		want       bool // On
		byStatus   bool // Status
	}{
		{200, "", false, false},
		{304, "3", false, false},
		{404, "", false, false},
		{410, "3", true, false},
		{410, "soon", false, false},
		{410, "Sun, 01 Mar 2026 10:02:00 GMT", true, false},
		{429, "", true, true},
		{500, "", true, true},
		{501, "", false, false},
		{501, "3", true, false},
		{503, "", true, true},
		{505, "", false, false},
		{600, "3", false, false},
	}
	for _, tt := range tests {
		h := http.Header{}
		if tt.retryAfter != "" {
			h.Set("Retry-After", tt.retryAfter)
		}
		if got := On(tt.status, h); got != tt.want {
			t.Errorf("On(%d, Retry-After %q) = %v; want %v", tt.status, tt.retryAfter, got, tt.want)
		}
		if got := Status(tt.status); got != tt.byStatus {
			t.Errorf("Status(%d) = %v; want %v", tt.status, got, tt.byStatus)
		}
	}
}
