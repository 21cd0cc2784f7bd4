package main

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/polite-go/polite/robotstxt"
)

func TestRobotsFlag(t *testing.T) {
	tests := []struct {
		value string
		path  string
		from  string // RFC 3339; "" for the start
		bad   bool
	}{
		{"robots.txt", "robots.txt", "", false},
		{"2026-03-01=robots.txt", "robots.txt", "2026-03-01T00:00:00Z", false},
		{"2026-03-01T12:30:00+02:00=old=robots.txt", "old=robots.txt", "2026-03-01T10:30:00Z", false},
		{"a=b.txt", "a=b.txt", "", false},
		{"2026-03-01=", "", "", true},
		{"", "", "", true},
	}
	for _, tt := range tests {
		var f robotsFlag
		err := f.Set(tt.value)
		if tt.bad {
			if err == nil {
				t.Errorf("Set(%q) = %+v; want an error", tt.value, f)
			}
			continue
		}
		from := ""
		if err == nil && f[0].from != math.MinInt64 {
			from = rfc3339(f[0].from)
		}
		if err != nil || f[0].path != tt.path || from != tt.from {
			t.Errorf("Set(%q) = %+v (from %q), %v; want %q from %q", tt.value, f, from, err, tt.path, tt.from)
		}
	}
}

func TestVersionAt(t *testing.T) {
	at := func(h int) int64 { return time.Date(2026, 3, 1, h, 0, 0, 0, time.UTC).UnixNano() }
	dated := []robotsVersion{{from: at(10)}, {from: at(12)}, {from: at(14)}}
	fromStart := []robotsVersion{{from: math.MinInt64}, {from: at(12)}}
	tests := []struct {
		versions []robotsVersion
		t        int64
		hint     int
		want     int
	}{
		{dated, at(9), 0, -1},
		{dated, at(10), -1, 0},
		{dated, at(11), 2, 0},
		{dated, at(12), 0, 1},
		{dated, at(13), 1, 1},
		{dated, at(20), 1, 2},
		{fromStart, at(0), 1, 0},
		{fromStart, math.MinInt64, 0, 0},
		{fromStart, at(12), 0, 1},
	}
	for _, tt := range tests {
		if got := versionAt(tt.versions, tt.t, tt.hint); got != tt.want {
			t.Errorf("versionAt(%s, hint %d) = %d; want %d", rfc3339(tt.t), tt.hint, got, tt.want)
		}
	}
}

func TestGroupTokens(t *testing.T) {
	body := "User-agent: *\nUser-agent: Googlebot/2.1 # Google\nDisallow: /x\n\n" +
		"useragent: GPTBot\nuser agent: bingbot\nUser-Agent: googlebot\n# User-agent: commented\n" +
		"User-agent: \nDisallow: /y\nUser-agent: -dash\n"
	got := groupTokens([]byte(body), robotstxt.Parse([]byte(body)))
	if want := []string{"googlebot", "gptbot", "bingbot", "-dash"}; !slices.Equal(got, want) {
		t.Errorf("groupTokens = %q; want %q", got, want)
	}
}
