package polite

// Benchmarks of the figures BENCHMARKS.md records: the cost of RoundTrip on
// top of the base transport, the robots.txt decision, memory per host and
// parallel scaling; those of the robots.txt engine alone are in package
// robotstxt. They measure; they assert nothing about time. For example
//
//	go test -run '^$' -bench '^Benchmark(RoundTrip|RobotsDecision)$' -benchmem -count 8
//
// BENCHMARKS.md lists the command of each figure. The loopback, site-side
// pacing and colly figures, which need a server in another process or other
// modules, live in the nested module bench/.

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/polite-go/polite/internal/cputime"
	"github.com/polite-go/polite/internal/robotstest"
	"github.com/polite-go/polite/pace"
	"github.com/polite-go/polite/robotstxt"
)

// loopCPU runs body in b.Loop and reports cpu-ns/op besides ns/op.
var loopCPU = cputime.Loop

// benchUA is the User-Agent of the benchmark requests, and the transport's:
// a request that carries it is not cloned.
const benchUA = "BenchBot/1.0 (+https://example.com/bot)"

// The robots.txt of the hot-path figures, which package robotstxt's
// benchmarks share (internal/robotstest): benchPath matches none of
// benchRobots' rules, so every rule is tried.
const (
	benchPath      = robotstest.Path
	benchWildEvery = robotstest.WildEvery
)

var (
	benchRobots     = robotstest.File
	benchRuleCounts = robotstest.RuleCounts
)

// nopBase is a base transport that answers every page with one shared
// response and robots.txt with robots, or with 404 when robots is ""; it
// allocates nothing for a page.
type nopBase struct {
	robots        string
	page          *http.Response
	robotsFetches atomic.Int64
}

func newNopBase(robots string) *nopBase {
	return &nopBase{robots: robots, page: &http.Response{StatusCode: 200, Status: "200 OK", Header: http.Header{}, Body: http.NoBody}}
}

func (b *nopBase) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Path == "/robots.txt" {
		b.robotsFetches.Add(1)
		if b.robots == "" {
			return &http.Response{StatusCode: 404, Status: "404 Not Found", Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		}
		return &http.Response{StatusCode: 200, Status: "200 OK", Header: http.Header{},
			Body: io.NopCloser(strings.NewReader(b.robots)), Request: r}, nil
	}
	return b.page, nil
}

// benchRequest returns a GET for rawURL with the User-Agent ua, "" for none.
func benchRequest(tb testing.TB, rawURL, ua string) *http.Request {
	req, err := http.NewRequest("GET", rawURL, nil)
	if err != nil {
		tb.Fatal(err)
	}
	if ua != "" {
		req.Header.Set("User-Agent", ua)
	}
	return req
}

// benchTransport returns a transport over a nopBase with pacing that never
// binds (base delay 0, no jitter), room for hosts, and the robots.txt
// fetched for every request in reqs.
func benchTransport(tb testing.TB, robots string, hosts int, reqs ...*http.Request) *PoliteTransport {
	tr := New(newNopBase(robots), WithUserAgent(benchUA), WithPacing(pace.Policy{BaseDelay: pace.None, Jitter: pace.None}), WithLimits(Limits{MaxKeys: hosts, MaxOrigins: hosts}))
	for _, req := range reqs {
		if _, err := tr.RoundTrip(req); err != nil {
			tb.Fatal(err)
		}
	}
	return tr
}

// BenchmarkRoundTrip is the hot path: RoundTrip over a base that does
// nothing, robots.txt cached, pacing not binding. "base" is the base alone;
// "rules=N" goes through the transport with a robots.txt of N rules;
// "rules=20/addUA" sends requests without a User-Agent, which the
// transport adds on a copy.
func BenchmarkRoundTrip(b *testing.B) {
	roundTrip := func(b *testing.B, rt http.RoundTripper, req *http.Request) {
		loopCPU(b, func() {
			if _, err := rt.RoundTrip(req); err != nil {
				b.Fatal(err)
			}
		})
	}
	b.Run("base", func(b *testing.B) {
		roundTrip(b, newNopBase(""), benchRequest(b, "http://bench.example"+benchPath, benchUA))
	})
	for _, n := range benchRuleCounts {
		b.Run(fmt.Sprintf("rules=%d", n), func(b *testing.B) {
			req := benchRequest(b, "http://bench.example"+benchPath, benchUA)
			roundTrip(b, benchTransport(b, benchRobots(n, benchWildEvery), 1, req), req)
		})
	}
	b.Run("rules=20/addUA", func(b *testing.B) {
		req := benchRequest(b, "http://bench.example"+benchPath, "")
		roundTrip(b, benchTransport(b, benchRobots(20, benchWildEvery), 1, req), req)
	})
}

// BenchmarkRoundTripHosts is the hot path when the transport's state for a
// host is no longer in the processor's caches, as in a crawler that visits
// many hosts in turn: each call goes to a host drawn in a shuffled order
// from N, on a request built for it as a caller builds one (so the request
// itself is fresh in the caches). robots.txt is 404, cached, and pacing
// never binds. "base" is the same loop straight to the base transport; the
// cost of the transport is polite − base at the same N.
func BenchmarkRoundTripHosts(b *testing.B) {
	base := newNopBase("")
	for _, hosts := range []int{1, 1000, 100_000} {
		urls := benchHostURLs(hosts)
		order := rand.Perm(hosts)
		run := func(b *testing.B, rt http.RoundTripper) {
			i := 0
			loopCPU(b, func() {
				req, err := http.NewRequest("GET", urls[order[i]], nil)
				if err != nil {
					b.Fatal(err)
				}
				req.Header.Set("User-Agent", benchUA)
				if _, err := rt.RoundTrip(req); err != nil {
					b.Fatal(err)
				}
				if i++; i == hosts {
					i = 0
				}
			})
		}
		b.Run(fmt.Sprintf("hosts=%d/base", hosts), func(b *testing.B) { run(b, base) })
		b.Run(fmt.Sprintf("hosts=%d/polite", hosts), func(b *testing.B) {
			tr := New(base, WithUserAgent(benchUA), WithPacing(pace.Policy{BaseDelay: pace.None, Jitter: pace.None}), WithLimits(Limits{MaxKeys: 2 * hosts, MaxOrigins: 2 * hosts}))
			for _, u := range urls {
				if _, err := tr.RoundTrip(benchRequest(b, u, benchUA)); err != nil {
					b.Fatal(err)
				}
			}
			run(b, tr)
		})
	}
}

// BenchmarkTimeNow is the cost of reading the clock, which RoundTrip does
// three times: for the robots.txt lifetime, the start and the latency.
func BenchmarkTimeNow(b *testing.B) {
	var t time.Time
	loopCPU(b, func() { t = time.Now() })
	_ = t
}

// BenchmarkRobotsDecision is the whole robots.txt decision of one request:
// the URL's escaped path and query, normalised, then matched.
func BenchmarkRobotsDecision(b *testing.B) {
	req := benchRequest(b, "http://bench.example"+benchPath, benchUA)
	for _, n := range benchRuleCounts {
		b.Run(fmt.Sprintf("rules=%d", n), func(b *testing.B) {
			rules := &robotsRecord{file: robotstxt.Parse([]byte(benchRobots(n, benchWildEvery)))}
			token := robotstxt.ProductToken(benchUA)
			loopCPU(b, func() {
				if !match(rules, token, req.URL, FailOpen).allowed {
					b.Fatal("refused")
				}
			})
		})
	}
}

// benchHostURLs returns the benchmark URL on n hosts.
func benchHostURLs(n int) []string {
	urls := make([]string, n)
	for i := range urls {
		urls[i] = fmt.Sprintf("http://host-%d.example%s", i, benchPath)
	}
	return urls
}

// BenchmarkRoundTripParallel runs RoundTrip from GOMAXPROCS goroutines
// across 10,000 hosts with a 20-rule robots.txt each, every goroutine on
// hosts of its own so that pacing never binds. Compare -cpu 1 and -cpu 2:
// with no global lock on the hot path, ns/op halves.
func BenchmarkRoundTripParallel(b *testing.B) {
	const hosts = 10000
	var reqs []*http.Request
	for _, u := range benchHostURLs(hosts) {
		reqs = append(reqs, benchRequest(b, u, benchUA))
	}
	tr := benchTransport(b, benchRobots(20, benchWildEvery), hosts, reqs...)
	procs := runtime.GOMAXPROCS(0)
	var next atomic.Int32
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		g := int(next.Add(1) - 1)
		// Goroutine g takes hosts g, g+procs, g+2·procs, …: none shares a host.
		i := g % procs
		for pb.Next() {
			if _, err := tr.RoundTrip(reqs[i]); err != nil {
				b.Error(err)
				return
			}
			if i += procs; i >= hosts {
				i = g % procs
			}
		}
	})
}

// heapInUse returns the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkMemoryPerHost measures what 100,000 hosts cost: "pacer" is the
// pacing state of one host, "robots-cache" the cache slot of one origin
// whose robots.txt came back 404, "transport" both, reached through
// RoundTrip. The figures are B/host; robots.txt rules are excluded (404).
func BenchmarkMemoryPerHost(b *testing.B) {
	const hosts = 100_000
	urls := benchHostURLs(hosts)
	keys := make([]string, hosts)
	origins := make([]originKey, hosts)
	for i, u := range urls {
		req := benchRequest(b, u, "")
		keys[i] = hostKey(req.URL)
		origins[i], _ = originOf(req.URL)
	}
	measure := func(b *testing.B, fill func() any) {
		var total float64
		runs := 0
		for b.Loop() {
			before := heapInUse()
			kept := fill()
			total += float64(heapInUse()-before) / hosts
			runtime.KeepAlive(kept)
			runs++
		}
		b.ReportMetric(total/float64(runs), "B/host")
	}
	b.Run("pacer", func(b *testing.B) {
		measure(b, func() any {
			p, err := pace.NewMemory(pace.Config{MaxKeys: hosts})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			for _, k := range keys {
				l, _ := p.Acquire(ctx, pace.Request{Key: k})
				p.Release(l, outSuccess)
			}
			return p
		})
	})
	b.Run("robots-cache", func(b *testing.B) {
		measure(b, func() any {
			c := newRobotsCache(func(_ context.Context, k originKey, _ *robotsRecord) *robotsRecord {
				return &robotsRecord{url: k.String() + "/robots.txt", status: 404, counts: new(robotsCounts)}
			}, nil, time.Hour, hosts, defaultLimits.RobotsCacheBytes)
			ctx := context.Background()
			for _, k := range origins {
				if _, err := c.get(ctx, &k, nil); err != nil {
					b.Fatal(err)
				}
			}
			return c
		})
	})
	b.Run("transport", func(b *testing.B) {
		// The requests are built before measuring: they are the caller's.
		reqs := make([]*http.Request, hosts)
		for i, u := range urls {
			reqs[i] = benchRequest(b, u, benchUA)
		}
		base := newNopBase("")
		measure(b, func() any {
			tr := New(base, WithUserAgent(benchUA), WithPacing(pace.Policy{BaseDelay: pace.None, Jitter: pace.None}), WithLimits(Limits{MaxKeys: hosts, MaxOrigins: hosts}))
			for _, req := range reqs {
				if _, err := tr.RoundTrip(req); err != nil {
					b.Fatal(err)
				}
			}
			return tr
		})
	})
}

// BenchmarkRobotsFirstRequests sends 1,000 concurrent first requests to
// one origin and reports how many robots.txt fetches they caused.
func BenchmarkRobotsFirstRequests(b *testing.B) {
	const concurrent = 1000
	req := benchRequest(b, "http://bench.example"+benchPath, benchUA)
	var fetches, runs float64
	for b.Loop() {
		base := newNopBase(benchRobots(20, benchWildEvery))
		tr := New(base, WithUserAgent(benchUA), WithPacing(pace.Policy{BaseDelay: pace.None, Jitter: pace.None, MaxInFlight: concurrent}))
		var start, done sync.WaitGroup
		start.Add(1)
		for range concurrent {
			done.Go(func() {
				start.Wait()
				if _, err := tr.RoundTrip(req); err != nil {
					b.Error(err)
				}
			})
		}
		start.Done()
		done.Wait()
		fetches += float64(base.robotsFetches.Load())
		runs++
	}
	b.ReportMetric(fetches/runs, "fetches/origin")
}
