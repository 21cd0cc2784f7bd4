package politeredis

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/polite-go/polite/pace"
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
		if _, err := p.Ready(ctx, pace.Request{Key: "host" + strconv.Itoa(i%statsKeys) + ".example"}); err != nil {
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
	p := NewPacer(c, WithKeyPrefix(freshPrefix()), FailWhenUnreachable())(pace.Config{Policy: unpaced()}).(*pacer)
	ctx := context.Background()
	for i := range statsKeys {
		l, err := p.Acquire(ctx, pace.Request{Key: "host" + strconv.Itoa(i) + ".example"})
		if err != nil {
			b.Fatal(err)
		}
		p.Release(l, pace.Outcome{Class: pace.Success})
	}
	if err := c.ConfigResetStat(ctx).Err(); err != nil {
		b.Fatal(err)
	}
	return c, p
}
