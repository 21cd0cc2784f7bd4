package politeredis

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/polite-go/polite"
)

// BenchmarkRobotsLoad measures loading a fresh copy from Redis, as a
// process does once a copy's lifetime per origin: one call, the copy
// decoded.
func BenchmarkRobotsLoad(b *testing.B) {
	c := newClient(b)
	var calls counter
	c.AddHook(&calls)
	s := NewRobotsStore(c, WithKeyPrefix(freshPrefix()), FailWhenUnreachable())
	ctx := context.Background()
	const origins = 1000
	body := []byte(strings.Repeat("Disallow: /private/path\n", 20)) // about 500 bytes
	fetch := func(o string) func(context.Context, *polite.RobotsFetch) *polite.RobotsFetch {
		return func(context.Context, *polite.RobotsFetch) *polite.RobotsFetch {
			return &polite.RobotsFetch{URL: o + "/robots.txt", Status: 200, FetchedAt: time.Now(), Body: body, Expires: time.Now().Add(time.Hour)}
		}
	}
	origin := func(i int) string { return "https://host" + strconv.Itoa(i%origins) + ".example:443" }
	for i := range origins {
		if _, err := s.Load(ctx, origin(i), fetch(origin(i))); err != nil {
			b.Fatal(err)
		}
	}
	calls.n.Store(0)
	n := 0
	for b.Loop() {
		if _, err := s.Load(ctx, origin(n), fetch(origin(n))); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(calls.n.Load())/float64(n), "calls/load")
}

// BenchmarkRobotsMemoryPerOrigin reports the memory Redis holds per
// origin's copy beyond its body, from INFO memory before and after b.N
// copies of a 500-byte file.
func BenchmarkRobotsMemoryPerOrigin(b *testing.B) {
	c := newClient(b)
	ctx := context.Background()
	used := func() int64 { return usedMemory(b, c) }
	s := NewRobotsStore(c, WithKeyPrefix(freshPrefix()), FailWhenUnreachable())
	body := []byte(strings.Repeat("Disallow: /private/path\n", 21))[:500]
	before := used()
	for i := 0; b.Loop(); i++ {
		o := "https://host" + strconv.Itoa(i) + ".example.com:443"
		_, err := s.Load(ctx, o, func(context.Context, *polite.RobotsFetch) *polite.RobotsFetch {
			return &polite.RobotsFetch{URL: o + "/robots.txt", Status: 200, FetchedAt: time.Now(), Duration: 80 * time.Millisecond, Body: body, ETag: `"5f3a-1c"`, Expires: time.Now().Add(24 * time.Hour)}
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(used()-before)/float64(b.N)-float64(len(body)), "bytes/origin-beyond-body")
}
