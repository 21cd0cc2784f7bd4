package polite

// Benchmarks of the host table and the robots.txt cache under bursts of new
// hosts: how far past their Limits they grow, whether they come back under
// it once the burst has passed, and what a cache full of fetches costs new
// origins. They measure; they assert nothing about time. Run them one at a
// time, for example
//
//	go test -run '^$' -bench 'HostBurst|RobotsFirstRequestsBounded' -benchtime 1x -count 1

import (
	"fmt"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/polite-go/polite/pace"
)

// BenchmarkHostBurst sends one request to each of 200,000 new hosts through
// a transport bounded at 1,000 hosts, with a 10ms base delay and no jitter,
// to a base that answers robots.txt with 404 and pages with 200 at once;
// waits 50ms, past every host's pace; then sends 1,000 requests to other
// new hosts. It reports the hosts tracked (len(Stats())) after the burst
// and after the 1,000 more, the heap in use after a collection before the
// burst, after it and at the end, in MB, and the burst's length in seconds.
//
// A sweep of the host table can drop only hosts whose pace is over, so the
// table outgrows its bound when hosts come faster than their pace passes.
// "robots.txt" is that burst: 4 goroutines request each host's /robots.txt
// itself, which is allowed without a robots.txt fetch and starts at once,
// as fast as the transport goes. "pages" is a crawler's burst: each first
// request fetches robots.txt, then waits the base delay for its page, so
// the requests come from 1,000 goroutines, which keeps it to a few seconds.
func BenchmarkHostBurst(b *testing.B) {
	b.Run("robots.txt", func(b *testing.B) { hostBurst(b, "/robots.txt", 4) })
	b.Run("pages", func(b *testing.B) { hostBurst(b, "/", 1000) })
}

func hostBurst(b *testing.B, path string, senders int) {
	const (
		burst = 200_000
		more  = 1_000
		bound = 1_000
	)
	var hostsBurst, hostsMore, heapBefore, heapBurst, heapMore, burstSecs float64
	runs := 0
	for b.Loop() {
		tr := New(newNopBase(""), WithUserAgent(benchUA), WithPacing(pace.Policy{BaseDelay: 10 * time.Millisecond, Jitter: pace.None}), WithLimits(Limits{MaxKeys: bound, MaxOrigins: bound}))
		heapBefore += megabytes(heapInUse())
		t0 := time.Now()
		burstSend(b, tr, fmt.Sprintf("burst%d", runs), path, burst, senders)
		burstSecs += time.Since(t0).Seconds()
		hostsBurst += float64(len(statsOf(b, tr)))
		heapBurst += megabytes(heapInUse())

		time.Sleep(50 * time.Millisecond)
		burstSend(b, tr, fmt.Sprintf("more%d", runs), path, more, senders)
		hostsMore += float64(len(statsOf(b, tr)))
		heapMore += megabytes(heapInUse())
		runtime.KeepAlive(tr) // else the collection in heapInUse frees it
		runs++
	}
	n := float64(runs)
	b.ReportMetric(hostsBurst/n, "hosts-after-burst")
	b.ReportMetric(hostsMore/n, "hosts-after-more")
	b.ReportMetric(heapBefore/n, "heap-before-MB")
	b.ReportMetric(heapBurst/n, "heap-after-burst-MB")
	b.ReportMetric(heapMore/n, "heap-after-more-MB")
	b.ReportMetric(burstSecs/n, "burst-s")
}

// burstSend sends a GET for path to each of n hosts named prefix-0.example,
// prefix-1.example, … through tr, from senders goroutines, and closes the
// responses.
func burstSend(b *testing.B, tr *PoliteTransport, prefix, path string, n, senders int) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range senders {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				resp, err := tr.RoundTrip(benchRequest(b, fmt.Sprintf("http://%s-%d.example%s", prefix, i, path), benchUA))
				if err != nil {
					b.Error(err)
					return
				}
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
}

func megabytes(n uint64) float64 { return float64(n) / (1 << 20) }

// BenchmarkRobotsFirstRequestsBounded sends 30,000 concurrent first
// requests, one to each of 30,000 origins, through a transport bounded at
// 100 hosts, to a base that holds every robots.txt answer until all 30,000
// fetches have started: the robots.txt cache is full of fetches, which it
// cannot drop, long before the last origin comes. It reports the wall time
// from the release of the requests until the last fetch started, in ns;
// bound=1000000, where nothing is ever dropped, is the reference.
func BenchmarkRobotsFirstRequestsBounded(b *testing.B) {
	for _, bound := range []int{100, 1_000_000} {
		b.Run(fmt.Sprint("bound=", bound), func(b *testing.B) { robotsFirstRequests(b, bound) })
	}
}

func robotsFirstRequests(b *testing.B, bound int) {
	const origins = 30_000
	var total time.Duration
	runs := 0
	for b.Loop() {
		b.StopTimer()
		base := newHeldRobotsBase(origins)
		tr := New(base, WithUserAgent(benchUA), WithPacing(pace.Policy{BaseDelay: pace.None, Jitter: pace.None}), WithLimits(Limits{MaxKeys: bound, MaxOrigins: bound}))
		reqs := make([]*http.Request, origins)
		for i := range reqs {
			reqs[i] = benchRequest(b, fmt.Sprintf("http://first-%d.example%s", i, benchPath), benchUA)
		}
		var start, done sync.WaitGroup
		start.Add(1)
		for _, req := range reqs {
			done.Go(func() {
				start.Wait()
				resp, err := tr.RoundTrip(req)
				if err != nil {
					b.Error(err)
					return
				}
				resp.Body.Close()
			})
		}
		b.StartTimer()

		t0 := time.Now()
		start.Done()
		select {
		case <-base.all:
		case <-time.After(10 * time.Minute):
			close(base.release)
			b.Fatalf("%d of %d robots.txt fetches started in 10 minutes", base.started.Load(), origins)
		}
		total += base.lastStart.Sub(t0)
		close(base.release)
		done.Wait()
		runs++
	}
	b.ReportMetric(float64(total.Nanoseconds())/float64(runs), "all-fetches-started-ns")
}

// heldRobotsBase is a base transport that answers pages with 200 at once and
// holds every robots.txt answer, a 404, until n fetches have started and
// release is closed.
type heldRobotsBase struct {
	n         int64
	started   atomic.Int64
	lastStart time.Time     // when the n-th fetch started; written before all is closed
	all       chan struct{} // closed when n fetches have started
	release   chan struct{} // closed by the benchmark to let the answers go
}

func newHeldRobotsBase(n int64) *heldRobotsBase {
	return &heldRobotsBase{n: n, all: make(chan struct{}), release: make(chan struct{})}
}

func (h *heldRobotsBase) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Path != "/robots.txt" {
		return &http.Response{StatusCode: 200, Status: "200 OK", Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	}
	if h.started.Add(1) == h.n {
		h.lastStart = time.Now()
		close(h.all)
	}
	<-h.release
	return &http.Response{StatusCode: 404, Status: "404 Not Found", Header: http.Header{}, Body: http.NoBody, Request: r}, nil
}
