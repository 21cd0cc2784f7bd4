package polite

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/polite-go/polite/pace"
)

// countingPacer is a pace.Pacer of its own, for WithPacer: the in-memory
// one, seen through the exported interface, counting leases.
type countingPacer struct {
	pace.Pacer
	mu       sync.Mutex // guards the fields below
	keys     []string
	released []pace.Outcome
	robots   []time.Duration // what RobotsRead was told
}

func (c *countingPacer) Acquire(ctx context.Context, r pace.Request) (pace.Lease, error) {
	l, err := c.Pacer.Acquire(ctx, r)
	if err != nil {
		return l, err
	}
	c.mu.Lock()
	c.keys = append(c.keys, r.Key)
	c.mu.Unlock()
	return l, nil
}

func (c *countingPacer) Release(l pace.Lease, o pace.Outcome) pace.Change {
	c.mu.Lock()
	c.released = append(c.released, o)
	c.mu.Unlock()
	return c.Pacer.Release(l, o)
}

func (c *countingPacer) RobotsRead(l pace.Lease, crawlDelay time.Duration) {
	c.mu.Lock()
	c.robots = append(c.robots, crawlDelay)
	c.mu.Unlock()
	c.Pacer.RobotsRead(l, crawlDelay)
}

// TestWithPacer checks that a pace.Pacer of WithPacer gets the transport's
// policy, paces every request, robots.txt fetches included, has each
// lease released once with the request's outcome, and hears what
// Crawl-delay a robots.txt fetch found.
func TestWithPacer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var cp *countingPacer
		var got pace.Config
		tr := New(site("User-agent: *\nCrawl-delay: 2\n"), WithPacing(pace.Policy{Jitter: pace.None, MaxInFlight: 3}), WithPacer(func(p pace.Config) pace.Pacer {
			got = p
			mp, err := pace.NewMemory(p)
			if err != nil {
				t.Fatal(err)
			}
			cp = &countingPacer{Pacer: &externalOnly{mp}}
			return cp
		}))
		want := defaultPacing // the Effective policy
		want.Jitter, want.MaxInFlight = pace.None, 3
		if got.Policy != want || got.Override != nil || got.MaxKeys != defaultLimits.MaxKeys {
			t.Errorf("config %+v; want %+v, no override and MaxKeys %d", got, want, defaultLimits.MaxKeys)
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
		if want := []time.Duration{2 * time.Second}; !slices.Equal(cp.robots, want) {
			t.Errorf("RobotsRead told %v; want %v", cp.robots, want)
		}
		for _, o := range cp.released {
			if o.Class != pace.Success {
				t.Errorf("released with %+v; want a success", o)
			}
		}
	})
}

// externalOnly hides a pace.Pacer's concrete type, so that the transport sees
// it as any other pace.Pacer.
type externalOnly struct{ pace.Pacer }

// TestWithPacerNil checks that a nil pace.Pacer is refused when the transport
// is built.
func TestWithPacerNil(t *testing.T) {
	defer func() {
		if err, ok := recover().(*ConfigError); !ok || err.Option != "WithPacer" {
			t.Errorf("New panicked with %v; want a *ConfigError of WithPacer", err)
		}
	}()
	New(http.DefaultTransport, WithPacer(func(pace.Config) pace.Pacer { return nil }))
}
