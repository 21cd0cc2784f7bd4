package politeredis

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/polite-go/polite/pace"
	"github.com/redis/go-redis/v9"
)

// TestFailover crawls three hosts, each kept on a different primary of a
// Cluster of three primaries with a replica each, from three Pacers (the
// processes of a fleet, each with its own client, on the options the
// package documentation shows) of four workers each, kills one primary mid-crawl and
// lets its replica be promoted. What must always hold: no request is held
// past its context; the hosts on the healthy primaries keep the pace
// throughout; every Pacer is back on Redis for the failed primary's host
// within seconds of the cluster being healthy, and keeps its pace from
// then; and once the workers stop, no lease is left in the cluster. The
// figures of the failover go to the test's log (go test -v -run
// TestFailover), for BENCHMARKS.md.
func TestFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	const (
		pacing   = 200 * time.Millisecond
		slack    = 50 * time.Millisecond // a start is when its request comes, which scheduling delays
		overrun  = 150 * time.Millisecond
		procs    = 3
		workers  = 4
		deadline = 2 * time.Second
		backIn   = 10 * time.Second // from the cluster being healthy
	)
	cl := launchCluster(t, 6, 1, "--cluster-node-timeout", "1000", "--cluster-require-full-coverage", "no")
	options := func() *redis.ClusterOptions {
		return &redis.ClusterOptions{Addrs: cl.addrs, ContextTimeoutEnabled: true}
	}
	prefix := freshPrefix()

	// A host on each primary.
	probe := redis.NewClusterClient(options())
	defer probe.Close()
	ctx := context.Background()
	masterOf := func(c *redis.ClusterClient, key string) string {
		m, err := c.MasterForKey(ctx, prefix+":{"+key+"}")
		if err != nil {
			return ""
		}
		return m.Options().Addr
	}
	var hosts []string
	primaries := map[string]string{} // host → its primary at the start
	for i := 0; len(hosts) < 3; i++ {
		h := fmt.Sprintf("host%d.test", i)
		m := masterOf(probe, h)
		if m != "" && !slices.Contains(slices.Collect(maps.Values(primaries)), m) {
			hosts = append(hosts, h)
			primaries[h] = m
		}
	}
	victim := hosts[0]
	dead := primaries[victim]

	// The hosts record when each request came, from which Pacer, and the
	// start that Redis recorded for it, when Redis admitted it.
	type arrival struct {
		at, start time.Time
		proc      string
	}
	var mu sync.Mutex
	arrivals := map[string][]arrival{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		a := arrival{at: time.Now(), proc: r.Header.Get("X-Proc")}
		if us, err := strconv.ParseInt(r.Header.Get("X-Start"), 10, 64); err == nil {
			a.start = time.UnixMicro(us)
		}
		arrivals[r.Host] = append(arrivals[r.Host], a)
		mu.Unlock()
	}))
	defer srv.Close()

	policy := pace.Policy{BaseDelay: pacing, LatencyFactor: pace.None, Jitter: pace.None}
	type proc struct {
		p      *pacer
		log    *syncBuffer
		memory time.Time // the last start of the victim's host in memory
	}
	ps := make([]*proc, procs)
	for i := range ps {
		c := redis.NewClusterClient(options())
		defer c.Close()
		log := &syncBuffer{}
		ps[i] = &proc{log: log, p: NewPacer(c, WithKeyPrefix(prefix),
			WithLogger(slog.New(slog.NewTextHandler(log, nil))))(pace.Config{Policy: policy}).(*pacer)}
	}
	var worst time.Duration
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i, pr := range ps {
		for w := range workers {
			wg.Go(func() {
				for n := w; ; n++ {
					select {
					case <-stop:
						return
					default:
					}
					host := hosts[n%len(hosts)]
					rctx, cancel := context.WithTimeout(ctx, deadline)
					end, _ := rctx.Deadline()
					l, err := pr.p.Acquire(rctx, pace.Request{Key: host})
					if late := time.Since(end); late > overrun {
						t.Logf("Acquire(%s) %v late: %v", host, late, err)
					}
					if err == nil {
						shared, _ := l.Ref.(*lease)
						if shared == nil && host == victim {
							mu.Lock()
							pr.memory = time.Now()
							mu.Unlock()
						}
						req, _ := http.NewRequestWithContext(rctx, "GET", srv.URL, nil)
						req.Host = host
						req.Header.Set("X-Proc", fmt.Sprint(i))
						if shared != nil {
							req.Header.Set("X-Start", shared.start)
						}
						if resp, err := http.DefaultClient.Do(req); err == nil {
							resp.Body.Close()
						}
						if late := time.Since(end); late > overrun {
							t.Logf("GET %s %v late", host, late)
						}
						pr.p.Release(l, pace.Outcome{Class: pace.Success})
					}
					cancel()
					if late := time.Since(end); late > 0 {
						mu.Lock()
						worst = max(worst, late)
						mu.Unlock()
					}
					if err != nil {
						time.Sleep(10 * time.Millisecond) // a deadline error comes at once
					}
				}
			})
		}
	}

	// The longest this process stalled, as a goroutine that sleeps 5ms
	// finds, for the log: on a loaded machine it tells scheduling from
	// the Pacers in a failure.
	var stall atomic.Int64
	stalls := make(chan struct{})
	defer close(stalls)
	go func() {
		for t0 := time.Now(); ; t0 = time.Now() {
			select {
			case <-stalls:
				return
			case <-time.After(5 * time.Millisecond):
			}
			if d := time.Since(t0) - 5*time.Millisecond; d > time.Duration(stall.Load()) {
				stall.Store(int64(d))
			}
		}
	}()
	time.Sleep(2 * time.Second)
	killed := time.Now()
	cl.procs[dead].Process.Kill()
	cl.procs[dead].Wait()
	// Healthy: a new client finds the victim's host on a primary that
	// answers.
	var healthy time.Time
	eventually(t, 30*time.Second, "the replica promoted", func() bool {
		c := redis.NewClusterClient(options())
		defer c.Close()
		m, err := c.MasterForKey(ctx, prefix+":{"+victim+"}")
		if err != nil || m.Options().Addr == dead || m.Ping(ctx).Err() != nil {
			return false
		}
		healthy = time.Now()
		return true
	})
	// Back: no Pacer has started a request to the victim's host in memory
	// for a second.
	var back time.Time
	eventually(t, backIn+time.Second, "every process back on redis", func() bool {
		mu.Lock()
		defer mu.Unlock()
		back = killed
		for _, pr := range ps {
			back = later(back, pr.memory)
		}
		return time.Since(back) > time.Second
	})
	time.Sleep(2 * time.Second)
	close(stop)
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	if back.Sub(healthy) > backIn {
		t.Errorf("last start in memory %v after the cluster was healthy; want within %v", back.Sub(healthy), backIn)
	}
	if worst > overrun {
		t.Errorf("a request ended %v past its context's deadline; want at most %v", worst, overrun)
	}
	// A gap shorter than the pace between two requests that Redis admitted
	// at least the pace apart is this machine's scheduling, not the
	// Pacers': the process that runs the fleet, with the race detector, on
	// two cores that other work loads, was seen to stall for up to 460ms,
	// and a request to come 108ms after the start Redis recorded for it,
	// while the next came 2ms after its own. Such a gap is logged, not
	// counted; a start in memory has no record to show that, and counts.
	scheduling := 0
	for _, h := range hosts {
		var before, during, after, n [3]int
		a := arrivals[h]
		for i := 1; i < len(a); i++ {
			phase := 0
			switch {
			case a[i-1].at.After(back.Add(slack)): // the gap after the last start in memory is the window's
				phase = 2
			case a[i].at.After(killed):
				phase = 1
			}
			n[phase]++
			if gap := a[i].at.Sub(a[i-1].at); gap < pacing-slack {
				if !a[i-1].start.IsZero() && !a[i].start.IsZero() && a[i].start.Sub(a[i-1].start).Abs() >= pacing {
					t.Logf("%s: gap %v from %s at %v to %s at %v, started by Redis %v apart", h, gap, a[i-1].proc, a[i-1].at.Sub(killed),
						a[i].proc, a[i].at.Sub(killed), a[i].start.Sub(a[i-1].start).Abs())
					scheduling++
					continue
				}
				if phase != 1 {
					t.Logf("%s: gap %v from %s at %v to %s at %v", h, gap, a[i-1].proc, a[i-1].at.Sub(killed), a[i].proc, a[i].at.Sub(killed))
				}
				switch phase {
				case 0:
					before[0]++
				case 1:
					during[0]++
				case 2:
					after[0]++
				}
			}
		}
		t.Logf("%s (primary %s%s): gaps shorter than the pace before the kill %d/%d, during %d/%d, after every process was back %d/%d",
			h, primaries[h], map[bool]string{true: ", killed", false: ""}[h == victim], before[0], n[0], during[0], n[1], after[0], n[2])
		if before[0] > 0 || after[0] > 0 || h != victim && during[0] > 0 {
			t.Errorf("%s: gaps shorter than the pace: before %d, during %d, after %d; want none but during, on the killed primary only", h, before[0], during[0], after[0])
		}
	}
	t.Logf("gaps shorter than the pace when their requests came, but started by Redis the pace apart: %d", scheduling)
	for i, pr := range ps {
		t.Logf("process %d: outages said %d, recoveries %d", i, strings.Count(pr.log.String(), "unreachable"), strings.Count(pr.log.String(), "answers again"))
		if t.Failed() {
			t.Log(pr.log.String())
		}
	}
	t.Logf("replica promoted %v after the kill; every process back %v after that; worst overrun past a deadline %v; longest stall of this process %v",
		healthy.Sub(killed).Round(10*time.Millisecond), back.Sub(healthy).Round(10*time.Millisecond), worst.Round(time.Millisecond),
		time.Duration(stall.Load()).Round(time.Millisecond))

	// No lease is left: those of requests ended in the failover are given
	// back.
	fresh := redis.NewClusterClient(options())
	defer fresh.Close()
	eventually(t, 5*time.Second, "every lease given back", func() bool {
		for _, h := range hosts {
			if leases(t, fresh, prefix+":{"+h+"}") > 0 {
				return false
			}
		}
		return true
	})
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
