package politeredis

import (
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/polite-go/polite/internal/cputime"
	"github.com/polite-go/polite/pace"
	"github.com/redis/go-redis/v9"
)

// counter is a go-redis hook that counts the commands sent, and the round
// trips that sent them: one per command alone, one per pipeline.
type counter struct{ n, trips atomic.Int64 }

func (c *counter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *counter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.n.Add(1)
		c.trips.Add(1)
		return next(ctx, cmd)
	}
}
func (c *counter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.n.Add(int64(len(cmds)))
		c.trips.Add(1)
		return next(ctx, cmds)
	}
}

// unpaced is a policy under which no request waits, so that a benchmark
// measures the store and not the policy.
func unpaced() pace.Policy {
	p := pace.Policy{BaseDelay: pace.None, LatencyFactor: pace.None, Jitter: pace.None, MaxInFlight: 1 << 20}
	return p
}

// BenchmarkAcquireRelease measures requests through one Redis primary: 256
// goroutines (128 × GOMAXPROCS) over 100,000 keys, each request one
// Acquire, with a context that can end, and one Release. It reports
// requests per second, Redis calls per request, the round trips that
// carried them and the latency that Acquire and Release add, at the median
// and the 99th percentile.
//
// The client and the server share the machine's CPUs, so req/s is what
// both together sustain. The CPU time each spends per request says which
// one limits: server-cpu-µs/req is the server's main thread (INFO cpu),
// I/O included, and primary-req/s = 1e6 / server-cpu-µs/req is what the
// primary would take with a CPU of its own; client-cpu-µs/req is this
// process's.
func BenchmarkAcquireRelease(b *testing.B) { benchAcquireRelease(b, 128) }

// BenchmarkAcquireReleaseFew is BenchmarkAcquireRelease for a process with
// few goroutines: 4 (2 × GOMAXPROCS).
func BenchmarkAcquireReleaseFew(b *testing.B) { benchAcquireRelease(b, 2) }

// benchAcquireRelease runs BenchmarkAcquireRelease with parallelism ×
// GOMAXPROCS goroutines.
func benchAcquireRelease(b *testing.B, parallelism int) {
	newClient(b) // skips without a server
	opts := clientOptions(sock)
	opts.PoolSize = 32
	c := redis.NewClient(opts)
	defer c.Close()
	var calls counter
	c.AddHook(&calls)
	// A call may queue for a connection for long on a busy machine; a
	// benchmark must not mistake that for an outage.
	p := NewPacer(c, WithKeyPrefix(freshPrefix()), FailWhenUnreachable(), WithTimeout(time.Minute))(pace.Config{Policy: unpaced()})
	keys := make([]string, 100_000)
	for i := range keys {
		keys[i] = "host" + strconv.Itoa(i) + ".example"
	}
	var (
		mu  sync.Mutex
		lat []time.Duration
	)
	m := startLoad(b, c, &calls)
	b.SetParallelism(parallelism)
	b.RunParallel(func(pb *testing.PB) {
		ctx, cancel := requestContext()
		defer cancel()
		var mine []time.Duration
		for pb.Next() {
			k := keys[rand.IntN(len(keys))]
			s := time.Now()
			l, err := p.Acquire(ctx, pace.Request{Key: k})
			if err != nil {
				b.Error(err)
				return
			}
			p.Release(l, pace.Outcome{Class: pace.Success})
			mine = append(mine, time.Since(s))
		}
		mu.Lock()
		lat = append(lat, mine...)
		mu.Unlock()
	})
	m.report(len(lat), "req")
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	}
}

// A load is a benchmark's measurement of what a loop of calls costs the
// client and the server: it starts when made, the server's statistics
// reset, and ends at report.
type load struct {
	b        *testing.B
	c        *redis.Client
	calls    *counter
	t0       time.Time
	server   time.Duration // the server's CPU at the start
	client   time.Duration // this process's
	clientOK bool          // this process's CPU can be read
}

// startLoad resets the server's statistics and calls, and starts b's
// timer.
func startLoad(b *testing.B, c *redis.Client, calls *counter) *load {
	if err := c.ConfigResetStat(context.Background()).Err(); err != nil {
		b.Fatal(err)
	}
	calls.n.Store(0)
	calls.trips.Store(0)
	m := &load{b: b, c: c, calls: calls, server: serverCPU(b, c)}
	m.client, m.clientOK = cputime.Process()
	b.ResetTimer()
	m.t0 = time.Now()
	return m
}

// report stops b's timer and reports n units a second, and per unit the
// server's CPU (INFO cpu, I/O included) and what a primary with a CPU of
// its own would take, this process's CPU, and Redis calls and the round
// trips that carried them; then the server's time per script call.
func (m *load) report(n int, unit string) {
	b := m.b
	elapsed := time.Since(m.t0)
	b.StopTimer()
	client, ok := cputime.Process()
	server := serverCPU(b, m.c) - m.server
	if n > 0 {
		x := float64(n)
		b.ReportMetric(x/elapsed.Seconds(), unit+"/s")
		per := float64(server.Microseconds()) / x
		b.ReportMetric(per, "server-cpu-µs/"+unit)
		b.ReportMetric(1e6/per, "primary-"+unit+"/s")
		if ok && m.clientOK {
			b.ReportMetric(float64((client-m.client).Microseconds())/x, "client-cpu-µs/"+unit)
		}
		b.ReportMetric(float64(m.calls.n.Load())/x, "calls/"+unit)
		b.ReportMetric(float64(m.calls.trips.Load())/x, "trips/"+unit)
	}
	b.ReportMetric(serverMicrosPerCall(b, m.c), "server-µs/call")
}

// info returns the fields of an INFO section of the server.
func info(b *testing.B, c *redis.Client, section string) map[string]string {
	text, err := c.Info(context.Background(), section).Result()
	if err != nil {
		b.Fatal(err)
	}
	fields := map[string]string{}
	for line := range strings.Lines(text) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			fields[k] = v
		}
	}
	return fields
}

// number returns an INFO field as a number, failing b when it is not one.
func number(b *testing.B, fields map[string]string, name string) float64 {
	x, err := strconv.ParseFloat(fields[name], 64)
	if err != nil {
		b.Fatalf("INFO field %s = %q", name, fields[name])
	}
	return x
}

// serverMicrosPerCall returns the server's time per EVALSHA, scripts
// included, from INFO commandstats; 0 when there was none.
func serverMicrosPerCall(b *testing.B, c *redis.Client) float64 {
	for f := range strings.SplitSeq(info(b, c, "commandstats")["cmdstat_evalsha"], ",") {
		if v, ok := strings.CutPrefix(f, "usec_per_call="); ok {
			x, _ := strconv.ParseFloat(v, 64)
			return x
		}
	}
	return 0
}

// usedMemory returns the server's used_memory, from INFO memory.
func usedMemory(b *testing.B, c *redis.Client) int64 {
	return int64(number(b, info(b, c, "memory"), "used_memory"))
}

// serverCPU returns the CPU time, user and system, that the server's main
// thread has used so far, from INFO cpu.
func serverCPU(b *testing.B, c *redis.Client) time.Duration {
	fields := info(b, c, "cpu")
	sec := number(b, fields, "used_cpu_sys_main_thread") + number(b, fields, "used_cpu_user_main_thread")
	return time.Duration(sec * float64(time.Second))
}

// BenchmarkMemoryPerHost reports the memory Redis holds per host paced
// once, from INFO memory before and after b.N hosts.
func BenchmarkMemoryPerHost(b *testing.B) {
	c := newClient(b)
	ctx := context.Background()
	used := func() int64 { return usedMemory(b, c) }
	if err := c.FlushAll(ctx).Err(); err != nil {
		b.Fatal(err)
	}
	p := NewPacer(c, WithKeyPrefix("polite"), FailWhenUnreachable())(pace.Config{Policy: pace.Policy{}})
	before := used()
	for i := 0; b.Loop(); i++ {
		l, err := p.Acquire(ctx, pace.Request{Key: "host" + strconv.Itoa(i) + ".example.com"})
		if err != nil {
			b.Fatal(err)
		}
		p.Release(l, pace.Outcome{Class: pace.Success})
	}
	b.ReportMetric(float64(used()-before)/float64(b.N), "bytes/host")
}

// BenchmarkAcquireReleaseLatency measures what one request's Acquire and
// Release add when nothing else runs: one goroutine, a key each time. Its
// server-µs/call is the scripts' cost with no other load on the machine.
func BenchmarkAcquireReleaseLatency(b *testing.B) {
	c := newClient(b)
	p := NewPacer(c, WithKeyPrefix(freshPrefix()), FailWhenUnreachable())(pace.Config{Policy: unpaced()})
	ctx, cancel := requestContext()
	defer cancel()
	var lat []time.Duration
	if err := c.ConfigResetStat(ctx).Err(); err != nil {
		b.Fatal(err)
	}
	for i := 0; b.Loop(); i++ {
		s := time.Now()
		l, err := p.Acquire(ctx, pace.Request{Key: "host" + strconv.Itoa(i%100_000) + ".example"})
		if err != nil {
			b.Fatal(err)
		}
		p.Release(l, pace.Outcome{Class: pace.Success})
		lat = append(lat, time.Since(s))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(serverMicrosPerCall(b, c), "server-µs/call")
}

// requestContext returns the context of a request of the benchmarks: one
// that can end, as that of a request with a timeout.
func requestContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), time.Hour)
}

// BenchmarkAcquireReleaseMemory is BenchmarkAcquireRelease's loop on the
// in-memory Pacer, for comparison: what a process pays for pacing alone.
func BenchmarkAcquireReleaseMemory(b *testing.B) {
	p, _ := pace.NewMemory(pace.Config{Policy: unpaced()})
	keys := make([]string, 100_000)
	for i := range keys {
		keys[i] = "host" + strconv.Itoa(i) + ".example"
	}
	b.SetParallelism(128)
	t0 := time.Now()
	n := atomic.Int64{}
	b.RunParallel(func(pb *testing.PB) {
		ctx, cancel := requestContext()
		defer cancel()
		for pb.Next() {
			l, err := p.Acquire(ctx, pace.Request{Key: keys[rand.IntN(len(keys))]})
			if err != nil {
				b.Error(err)
				return
			}
			p.Release(l, pace.Outcome{Class: pace.Success})
			n.Add(1)
		}
	})
	b.ReportMetric(float64(n.Load())/time.Since(t0).Seconds(), "req/s")
}
