package audit

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/polite-go/polite/robotstxt"
)

func TestVersionAt(t *testing.T) {
	at := func(h int) int64 { return time.Date(2026, 3, 1, h, 0, 0, 0, time.UTC).UnixNano() }
	dated := []Robots{{from: at(10)}, {from: at(12)}, {from: at(14)}}
	fromStart := []Robots{{from: math.MinInt64}, {from: at(12)}}
	tests := []struct {
		versions []Robots
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
