package polite

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// countingPacer is a Pacer of its own, for WithPacer: the in-memory one,
// seen through the exported interface, counting leases.
type countingPacer struct {
	Pacer
	mu       sync.Mutex // guards the fields below
	keys     []string
	released []Outcome
}

func (c *countingPacer) Acquire(ctx context.Context, key, partition string, crawlDelay time.Duration) (Lease, error) {
	l, err := c.Pacer.Acquire(ctx, key, partition, crawlDelay)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.keys = append(c.keys, key)
	c.mu.Unlock()
	return countingLease{l, c}, nil
}

type countingLease struct {
	Lease
	c *countingPacer
}

func (l countingLease) Release(o Outcome) Change {
	l.c.mu.Lock()
	l.c.released = append(l.c.released, o)
	l.c.mu.Unlock()
	return l.Lease.Release(o)
}

// TestWithPacer checks that a Pacer of WithPacer gets the transport's
// policy, paces every request, robots.txt fetches included, and has each
// lease released once with the request's outcome.
func TestWithPacer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var cp *countingPacer
		var got Policies
		tr := New(site("User-agent: *\nCrawl-delay: 2\n"), WithPacing(PacingPolicy{Jitter: None, MaxInFlight: 3}), WithPacer(func(p Policies) Pacer {
			got = p
			mp, err := NewMemoryPacer(p, 0)
			if err != nil {
				t.Fatal(err)
			}
			cp = &countingPacer{Pacer: &externalOnly{mp}}
			return cp
		}))
		want := defaultPacing // the Effective policy
		want.Jitter, want.MaxInFlight = None, 3
		if got.Default != want || got.Override != nil {
			t.Errorf("policies %+v; want %+v and no override", got, want)
		}
		t0 := time.Now()
		for range 2 {
			resp, err := get(tr, "http://h/page", "")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		if d := time.Since(t0); d != 4*time.Second { // robots.txt, then each page the Crawl-delay after the request before
			t.Errorf("two pages took %v; want 4s", d)
		}
		cp.mu.Lock()
		defer cp.mu.Unlock()
		if len(cp.keys) != 3 || len(cp.released) != 3 {
			t.Errorf("%d leases, %d released; want 3 and 3 (robots.txt and two pages)", len(cp.keys), len(cp.released))
		}
		for _, o := range cp.released {
			if o.Class != OutcomeSuccess {
				t.Errorf("released with %+v; want a success", o)
			}
		}
	})
}

// externalOnly hides a Pacer's concrete type, so that the transport sees
// it as any other Pacer.
type externalOnly struct{ Pacer }

// TestWithPacerNil checks that a nil Pacer is refused when the transport
// is built.
func TestWithPacerNil(t *testing.T) {
	defer func() {
		if err, ok := recover().(*ConfigError); !ok || err.Option != "WithPacer" {
			t.Errorf("New panicked with %v; want a *ConfigError of WithPacer", err)
		}
	}()
	New(http.DefaultTransport, WithPacer(func(Policies) Pacer { return nil }))
}
