package pace

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

// Quota partitions: a rate-limit quota holds only the requests of the
// partition whose responses reported it, in the pacer and through the
// transport.

// partitioned is an Outcome whose response said the quota of the
// server's partition resource has remaining requests of limit left until
// reset.
func partitioned(resource string, remaining, limit int64, reset time.Duration) Outcome {
	return Outcome{Class: Success, Quota: Quota{Known: true, Remaining: remaining, Limit: limit, Reset: reset, Partition: resource}}
}

// acquirePart acquires a request of partition to key in a new goroutine,
// and waits until it is admitted or blocked.
func acquirePart(ctx context.Context, p *Memory, key, partition string) <-chan admission {
	ch := make(chan admission, 1)
	go func() {
		tk, err := p.Acquire(ctx, Request{Key: key, Partition: partition, CrawlDelay: 0})
		ch <- admission{tk, err, time.Now()}
	}()
	synctest.Wait()
	return ch
}

func TestPartitionHolds(t *testing.T) {
	const s = time.Second
	tests := []struct {
		name    string
		first   string  // partition of the request whose response reports o
		o       Outcome // what it reports
		then    string  // partition of the next request
		wantGap time.Duration
	}{
		{"exhausted quota holds its partition", "A", partitioned("", 0, 0, 6*s), "A", 6 * s},
		{"exhausted quota holds no other partition", "A", partitioned("", 0, 0, 6*s), "B", 0},
		{"low quota spreads its partition", "A", partitioned("", 2, 100, 10*s), "A", 10 * s / 3},
		{"low quota spreads no other partition", "A", partitioned("", 2, 100, 10*s), "B", 0},
		{"a named resource holds its request partition", "", partitioned("search", 0, 0, 9*s), "", 9 * s},
		{"a named resource holds no other request partition", "search", partitioned("search", 0, 0, 9*s), "core", 0},
		{"a signal holds every partition", "A", Outcome{Class: Signal, RetryAfter: 30 * s}, "B", 30 * s},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := newTestPacer(0, withBaseDelay(0), withInFlight(100), func(c *Config) { c.Policy.LatencyFactor = None })
				tk, err := p.Acquire(context.Background(), Request{Key: pacerKey, Partition: tt.first, CrawlDelay: 0})
				if err != nil {
					t.Fatal(err)
				}
				p.Release(tk, tt.o)
				t0 := time.Now()
				if _, err := p.Acquire(context.Background(), Request{Key: pacerKey, Partition: tt.then, CrawlDelay: 0}); err != nil {
					t.Fatal(err)
				}
				if got := time.Since(t0); got != tt.wantGap {
					t.Errorf("next start %v after the response; want %v", got, tt.wantGap)
				}
			})
		})
	}
}

// TestPartitionNoHeadOfLine checks that a request held by its partition's
// quota waits outside the key's queue: a request of another partition
// that comes after it starts at once, with one slot in flight as with
// many.
func TestPartitionNoHeadOfLine(t *testing.T) {
	for _, inFlight := range []int{1, 8} {
		t.Run(fmt.Sprintf("MaxInFlight %d", inFlight), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := newTestPacer(0, withBaseDelay(0), withInFlight(inFlight), func(c *Config) { c.Policy.LatencyFactor = None })
				tk, _ := p.Acquire(context.Background(), Request{Key: pacerKey, Partition: "A", CrawlDelay: 0})
				p.Release(tk, partitioned("", 0, 0, 6*time.Second))
				t0 := time.Now()
				a := acquirePart(context.Background(), p, pacerKey, "A")
				pending(t, a, "A while its quota is exhausted")
				b := acquirePart(context.Background(), p, pacerKey, "B")
				got := <-b
				if got.err != nil || got.at.Sub(t0) != 0 {
					t.Fatalf("B: %v at +%v; want it started at once", got.err, got.at.Sub(t0))
				}
				p.Release(got.t, outSuccess)
				if got := <-a; got.err != nil || got.at.Sub(t0) != 6*time.Second {
					t.Errorf("A: %v at +%v; want it started at the reset, +6s", got.err, got.at.Sub(t0))
				}
			})
		})
	}
}

// TestPartitionDeadline checks that a request whose partition is held past
// its deadline fails at once with a *DeadlineError, and that a request of
// another partition with the same deadline does not.
func TestPartitionDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newTestPacer(0, withBaseDelay(0), withInFlight(8), func(c *Config) { c.Policy.LatencyFactor = None })
		tk, _ := p.Acquire(context.Background(), Request{Key: pacerKey, Partition: "A", CrawlDelay: 0})
		p.Release(tk, partitioned("", 0, 0, 6*time.Second))
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		var de *DeadlineError
		if _, err := p.Acquire(ctx, Request{Key: pacerKey, Partition: "A", CrawlDelay: 0}); !errors.As(err, &de) {
			t.Errorf("A: %v; want a *DeadlineError", err)
		}
		if _, err := p.Acquire(ctx, Request{Key: pacerKey, Partition: "B", CrawlDelay: 0}); err != nil {
			t.Errorf("B: %v; want a start", err)
		}
	})
}

// TestPartitionsBounded checks that a key keeps at most maxPartitions
// holds, dropping the one that ends first, and that a key whose partition
// is held is not forgotten.
func TestPartitionsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newTestPacer(0, withBaseDelay(0), withInFlight(1000), func(c *Config) { c.Policy.LatencyFactor = None })
		for i := range 2 * maxPartitions {
			tk, _ := p.Acquire(context.Background(), Request{Key: pacerKey, Partition: fmt.Sprint(i), CrawlDelay: 0})
			p.Release(tk, partitioned("", 0, 0, time.Duration(i+1)*time.Minute))
		}
		h := p.lookup(pacerKey)
		h.mu.Lock()
		n := len(h.pace.quotas)
		first := h.pace.quotas[0].partition
		h.mu.Unlock()
		if n != maxPartitions || first != fmt.Sprint(maxPartitions) {
			t.Errorf("%d holds, the first of %q; want %d, from %q: the ones that end last", n, first, maxPartitions, fmt.Sprint(maxPartitions))
		}
		if h.pol.startable(&h.pace, p.clock.now()) {
			t.Error("a key whose partitions are held is startable: it would be forgotten")
		}
		time.Sleep(2 * maxPartitions * time.Minute)
		if !h.pol.startable(&h.pace, p.clock.now()) {
			t.Error("a key whose holds are over is not startable")
		}
	})
}
