package main

import (
	"context"
	"net/http"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	date := now.Add(-time.Hour).Format(http.TimeFormat) // the server's clock is an hour behind
	tests := []struct {
		name   string
		header http.Header
		want   time.Duration
	}{
		{"none", http.Header{}, 0},
		{"seconds", http.Header{"Retry-After": {"8"}}, 8 * time.Second},
		{"spaces", http.Header{"Retry-After": {" 8 "}}, 8 * time.Second},
		{"zero", http.Header{"Retry-After": {"0"}}, 0},
		{"negative", http.Header{"Retry-After": {"-5"}}, 0},
		{"capped", http.Header{"Retry-After": {"99999"}}, time.Hour},
		{"junk", http.Header{"Retry-After": {"soon"}}, 0},
		{"date against now", http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second},
		{"date against Date", http.Header{"Retry-After": {now.Add(-time.Hour + 30*time.Second).Format(http.TimeFormat)}, "Date": {date}}, 30 * time.Second},
		{"date in the past", http.Header{"Retry-After": {now.Add(-time.Minute).Format(http.TimeFormat)}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := retryAfter(tt.header, now); got != tt.want {
				t.Errorf("retryAfter = %v; want %v", got, tt.want)
			}
		})
	}
}

func TestWireRecorder(t *testing.T) {
	site := newTestSite(t, "", map[string]http.HandlerFunc{
		"/busy": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "3")
			http.Error(w, "busy", http.StatusTooManyRequests)
		},
		"/gone": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "3") // not a backoff status: ignored
			http.Error(w, "gone", http.StatusGone)
		},
	})
	w := &wireRecorder{base: http.DefaultTransport}
	client := &http.Client{Transport: w}
	m := new(waitMeter)
	for _, path := range []string{"/robots.txt", "/busy", "/gone"} {
		req, err := http.NewRequestWithContext(withWaitMeter(context.Background(), m), http.MethodGet, site.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	got := w.requests()
	want := []struct {
		path       string
		robots     bool
		status     int
		retryAfter time.Duration
	}{
		{"/robots.txt", true, 404, 0},
		{"/busy", false, 429, 3 * time.Second},
		{"/gone", false, 410, 0},
	}
	if len(got) != len(want) {
		t.Fatalf("%d requests recorded; want %d", len(got), len(want))
	}
	for i, r := range got {
		w := want[i]
		if pathOf(r.URL) != w.path || r.Robots != w.robots || r.Status != w.status || r.RetryAfter != w.retryAfter || r.Host != "127.0.0.1" {
			t.Errorf("request %d = %+v; want %+v", i, r, w)
		}
		if r.End.Before(r.Start) || i > 0 && r.Start.Before(got[i-1].End) {
			t.Errorf("request %d: start %v, end %v out of order", i, r.Start, r.End)
		}
	}
	if _, _, sent := m.result(); !sent {
		t.Error("the wait meter saw no start")
	}
}
