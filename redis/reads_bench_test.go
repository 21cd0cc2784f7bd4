package politeredis

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/polite-go/polite"
	"github.com/redis/go-redis/v9"
)

// The cost of the reads that show the shared state: Ready, one call, and
// Stats, one pipeline over the keys this process used last.

// BenchmarkReady measures one Ready of a key that has state: what
// PoliteTransport.Ready and Check add, one goroutine.
func BenchmarkReady(b *testing.B) {
	c, p := usedKeys(b)
	ctx := context.Background()
	var lat []time.Duration
	for i := 0; b.Loop(); i++ {
		s := time.Now()
		if _, err := p.Ready(ctx, "host"+strconv.Itoa(i%statsKeys)+".example", "", 0); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(s))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(serverMicrosPerCall(b, c), "server-µs/call")
}

// BenchmarkStats measures one Stats over the 1,000 keys this process used
// last, with the time per key.
func BenchmarkStats(b *testing.B) {
	c, p := usedKeys(b)
	ctx := context.Background()
	for b.Loop() {
		stats, err := p.Stats(ctx)
		if err != nil || len(stats) != statsKeys {
			b.Fatalf("Stats = %d keys, %v", len(stats), err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/statsKeys, "µs/key")
	b.ReportMetric(serverMicrosPerCall(b, c), "server-µs/key")
}

// usedKeys returns a client of the test server and a Pacer on it that has
// used statsKeys keys, with the server's statistics reset.
func usedKeys(b *testing.B) (*redis.Client, *pacer) {
	c := newClient(b)
	p := NewPacer(c, WithKeyPrefix(freshPrefix()), FailWhenUnreachable())(polite.Policies{Default: unpaced()}).(*pacer)
	ctx := context.Background()
	for i := range statsKeys {
		l, err := p.Acquire(ctx, "host"+strconv.Itoa(i)+".example", "", 0)
		if err != nil {
			b.Fatal(err)
		}
		l.Release(polite.Outcome{Class: polite.OutcomeSuccess})
	}
	if err := c.ConfigResetStat(ctx).Err(); err != nil {
		b.Fatal(err)
	}
	return c, p
}
