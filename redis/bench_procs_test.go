package politeredis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/polite-go/polite/pace"
	"github.com/redis/go-redis/v9"
)

// BenchmarkAcquireReleaseProcesses drives the primary from benchProcs
// processes, this test binary run again with benchEnv set, each with
// 256/benchProcs goroutines making BenchmarkAcquireRelease's requests: the
// load of a fleet, which no process's pipelines gather. It reports
// requests per second, from the first process's start to the last one's
// end, and the server's CPU time per request as BenchmarkAcquireRelease
// does.
func BenchmarkAcquireReleaseProcesses(b *testing.B) {
	c := newClient(b)
	ctx := context.Background()
	prefix := freshPrefix()
	if err := c.ConfigResetStat(ctx).Err(); err != nil {
		b.Fatal(err)
	}
	cpu0 := serverCPU(b, c)
	b.ResetTimer()
	t0 := time.Now()
	var wg sync.WaitGroup
	for i := range benchProcs {
		n := b.N / benchProcs
		if i == 0 {
			n += b.N % benchProcs
		}
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), benchEnv+"="+strconv.Itoa(n), fleetSockEnv+"="+sock, benchPrefixEnv+"="+prefix)
		wg.Go(func() {
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Errorf("process %d: %v\n%s", i, err, out)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(t0)
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(n/elapsed.Seconds(), "req/s")
	perReq := float64((serverCPU(b, c) - cpu0).Microseconds()) / n
	b.ReportMetric(perReq, "server-cpu-µs/req")
	b.ReportMetric(1e6/perReq, "primary-req/s")
	b.ReportMetric(serverMicrosPerCall(b, c), "server-µs/call")
}

const (
	benchEnv       = "POLITEREDIS_BENCH_CHILD" // the requests the child makes
	benchPrefixEnv = "POLITEREDIS_BENCH_PREFIX"
	benchProcs     = 4
)

// benchChild is a process of BenchmarkAcquireReleaseProcesses: it makes
// its requests and returns its exit code.
func benchChild() int {
	n, err := strconv.ParseInt(os.Getenv(benchEnv), 10, 64)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	opts := clientOptions(os.Getenv(fleetSockEnv))
	opts.PoolSize = 32
	c := redis.NewClient(opts)
	defer c.Close()
	p := NewPacer(c, WithKeyPrefix(os.Getenv(benchPrefixEnv)), FailWhenUnreachable(), WithTimeout(time.Minute))(pace.Config{Policy: unpaced()})
	var (
		left atomic.Int64
		wg   sync.WaitGroup
		code atomic.Int32
	)
	left.Store(n)
	for range 256 / benchProcs {
		wg.Go(func() {
			ctx, cancel := requestContext()
			defer cancel()
			for left.Add(-1) >= 0 {
				l, err := p.Acquire(ctx, pace.Request{Key: "host" + strconv.Itoa(rand.IntN(100_000)) + ".example"})
				if err != nil {
					fmt.Println(err)
					code.Store(1)
					return
				}
				p.Release(l, pace.Outcome{Class: pace.Success})
			}
		})
	}
	wg.Wait()
	return int(code.Load())
}
