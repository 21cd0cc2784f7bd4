package politeredis

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/polite-go/polite/frontier"
	"github.com/redis/go-redis/v9"
)

// TestFrontierFailover crawls through a Cluster of three primaries with a
// replica each while four goroutines add URLs to 30 hosts and four take
// and end turns, kills (SIGKILL) one primary after a second and lets its
// replica be promoted, goes on adding for five seconds, then drains the
// frontier. What must hold: the crawl goes on and ends, no call outlives
// its context by much; and a URL that Add acknowledged and that is never
// handed out is one of the dead primary's hosts, acknowledged in the
// moment before the kill: what the primary had not replicated. The
// figures go to the test's log (go test -v -run TestFrontierFailover),
// for BENCHMARKS.md.
func TestFrontierFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	const window = time.Second // the most a loopback replica lags, with margin
	cl := launchCluster(t, 6, 1, "--cluster-node-timeout", "1000", "--cluster-require-full-coverage", "no")
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.addrs, ContextTimeoutEnabled: true})
	defer c.Close()
	prefix := freshPrefix()
	f, _ := unpacedFrontier(c, prefix, &okWeb{})
	defer f.Close()
	ctx := context.Background()
	primaryOf := func(host string) string {
		_, hash, _, _ := f.hostKeys(host)
		m, err := c.MasterForKey(ctx, hash)
		if err != nil {
			t.Fatal(err)
		}
		return m.Options().Addr
	}
	const hosts = 30
	primaries := map[string]string{}
	for h := range hosts {
		host := fmt.Sprintf("h%d.test", h)
		primaries[host] = primaryOf(host)
	}
	dead := primaries["h0.test"]

	var (
		mu      sync.Mutex // guards acked, handed and killed
		acked   = map[string]time.Time{}
		handed  = map[string]int{}
		killed  time.Time
		failed  int // Adds that failed
		overrun time.Duration
	)
	stopAdding := make(chan struct{})
	var adder sync.WaitGroup
	const adders = 4
	for a := range adders {
		adder.Go(func() {
			for i := a; ; i += adders {
				select {
				case <-stopAdding:
					return
				default:
				}
				u := fmt.Sprintf("http://h%d.test/%d", i%hosts, i)
				actx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
				ok, err := f.Add(actx, u)
				late := time.Since(deadlineOf(actx))
				cancel()
				mu.Lock()
				overrun = max(overrun, late)
				if ok {
					acked[u] = time.Now()
				} else if err != nil {
					failed++
				}
				mu.Unlock()
			}
		})
	}
	var workers sync.WaitGroup
	draining := make(chan struct{})
	for range 4 {
		workers.Go(func() {
			for {
				nctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				turn, err := f.Next(nctx)
				late := time.Since(deadlineOf(nctx))
				cancel()
				mu.Lock()
				overrun = max(overrun, late)
				mu.Unlock()
				switch {
				case errors.Is(err, frontier.ErrEmpty):
					select {
					case <-draining:
						return
					default:
						time.Sleep(10 * time.Millisecond)
						continue
					}
				case err != nil:
					continue // the failover: try again
				}
				mu.Lock()
				handed[turn.URL]++
				mu.Unlock()
				turn.Done()
			}
		})
	}

	time.Sleep(time.Second)
	mu.Lock()
	killed = time.Now()
	mu.Unlock()
	cl.procs[dead].Process.Kill()
	cl.procs[dead].Wait()
	time.Sleep(5 * time.Second)
	close(stopAdding)
	adder.Wait()
	close(draining)
	done := make(chan struct{})
	go func() { workers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the crawl did not end within a minute of the last Add")
	}

	mu.Lock()
	defer mu.Unlock()
	var lost, lostDead, dups int
	for u, at := range acked {
		if handed[u] > 0 {
			continue
		}
		lost++
		host := hostOfURL(u)
		if primaries[host] == dead {
			lostDead++
		}
		if primaries[host] != dead || at.After(killed) || killed.Sub(at) > window {
			t.Errorf("%s, acknowledged %v before the kill, of primary %s (dead %s), was never handed out; want only what the dead primary had not replicated",
				u, killed.Sub(at), primaries[host], dead)
		}
	}
	for _, n := range handed {
		if n > 1 {
			dups += n - 1
		}
	}
	s, err := f.Stats(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d URLs acknowledged (%d Adds failed in the failover); lost %d (%d of the dead primary's hosts); handed out twice %d; redelivered (Stats) %d; worst overrun past a context %v",
		len(acked), failed, lost, lostDead, dups, s.Redelivered, overrun.Round(time.Millisecond))
	if overrun > time.Second {
		t.Errorf("a call returned %v past its context's deadline; want at most 1s", overrun)
	}
}

// deadlineOf returns ctx's deadline, which it must have.
func deadlineOf(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	return d
}

// hostOfURL returns the host of an http URL of the tests.
func hostOfURL(u string) string {
	rest := u[len("http://"):]
	for i := range len(rest) {
		if rest[i] == '/' {
			return rest[:i]
		}
	}
	return rest
}
