package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/pace"
)

func TestCrawlProgress(t *testing.T) {
	now := at(10_000)
	stats := []polite.HostStats{
		{KeyState: pace.KeyState{Key: "idle.example"}},
		{KeyState: pace.KeyState{Key: "due.example", Waiting: 1, LastStart: at(9_000), Pace: time.Second}},
		{KeyState: pace.KeyState{Key: "paced.example", Waiting: 1, LastStart: at(9_000), Pace: 2 * time.Second}},
		{KeyState: pace.KeyState{Key: "backoff.example", Waiting: 2, LastStart: at(9_000), Pace: time.Second, PausedUntil: at(16_000)}},
	}
	got := crawlProgress(crawlCounts{Done: 7, Queued: 3, Blocked: 2, Busy: 2}, stats, now)
	want := "pages 7  queued 3  blocked by robots.txt 2  waiting: paced.example 1s, backoff.example 6s backoff"
	if got != want {
		t.Errorf("crawlProgress =\n%q; want\n%q", got, want)
	}

	// Hosts that wait in the frontier, with nothing in the transport.
	var many []polite.HostStats
	due := make(map[string]bool)
	for i := range maxWaitingShown + 2 {
		h := fmt.Sprintf("h%d.example", i)
		many = append(many, polite.HostStats{KeyState: pace.KeyState{Key: h, LastStart: at(9_500), Pace: time.Second}})
		due[h] = true
	}
	many = append(many, polite.HostStats{KeyState: pace.KeyState{Key: "notdue.example", LastStart: at(9_500), Pace: time.Second}})
	got = crawlProgress(crawlCounts{Due: due}, many, now)
	want = "pages 0  queued 0  blocked by robots.txt 0  waiting: h0.example 500ms, h1.example 500ms, h2.example 500ms, " +
		"h3.example 500ms, h4.example 500ms, h5.example 500ms and 2 more"
	if got != want {
		t.Errorf("crawlProgress =\n%q; want\n%q", got, want)
	}
	if isTerminal(&bytes.Buffer{}) {
		t.Error("a buffer is a terminal")
	}
	if strings.Contains(crawlProgress(crawlCounts{}, stats[:1], now), "waiting") {
		t.Error("an idle host is shown as waiting")
	}
}
