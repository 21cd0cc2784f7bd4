package politeredis

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/frontier"
	"github.com/polite-go/polite/pace"
	"github.com/redis/go-redis/v9"
)

// allowAll is a frontier.Transport whose every URL robots.txt allows at
// no cost, whose hosts have the default policy, and whose pacing key is
// the host name: what a benchmark measures is the frontier.
type allowAll struct{}

func (allowAll) Ready(*http.Request) (polite.Decision, error) {
	return polite.Decision{RobotsKnown: true}, nil
}

func (allowAll) Check(*http.Request) (polite.Decision, error) {
	return polite.Decision{Mode: polite.RobotsEnforce, Allowed: true, Policy: pace.Policy{}.Effective()}, nil
}

func (allowAll) PacingKey(u *url.URL) string { return u.Hostname() }

// benchFrontierURL is URL i of host h: 58 to 66 bytes, as package
// frontier's benchmarks have them.
func benchFrontierURL(h, i int) string {
	return fmt.Sprintf("https://www.host-%d.example.com/articles/2024/%d/a-page-title", h, i)
}

// fill adds n URLs over hosts hosts, round robin, from 64 goroutines.
func fill(b *testing.B, f *Frontier, hosts, n int) {
	var wg sync.WaitGroup
	const adders = 64
	for w := range adders {
		wg.Go(func() {
			for i := w; i < n; i += adders {
				if ok, err := f.Add(context.Background(), benchFrontierURL(i%hosts, i/hosts)); !ok || err != nil {
					b.Errorf("Add = %v, %v", ok, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkFrontierNextDone measures turns through one Redis primary: 256
// goroutines (128 × GOMAXPROCS) each take a URL with Next and end its turn
// with Done, over 10,000 hosts that robots.txt allows and no pace holds,
// which b.N URLs fill. It reports Next+Done pairs per second, the server's
// CPU per pair (INFO cpu, I/O included) and what a primary with a CPU of
// its own would take, the client's CPU per pair, and Redis calls and
// round trips per pair. Client and server share the machine's CPUs.
//
//	go test -run '^$' -bench FrontierNextDone -benchtime 3s -count 3
func BenchmarkFrontierNextDone(b *testing.B) {
	newClient(b) // skips without a server
	opts := clientOptions(sock)
	opts.PoolSize = 32
	c := redis.NewClient(opts)
	defer c.Close()
	var calls counter
	c.AddHook(&calls)
	f := NewFrontier(c, allowAll{}, frontier.Options{MaxURLs: 1 << 30}, WithKeyPrefix(freshPrefix()), WithTimeout(time.Minute))
	defer f.Close()
	fill(b, f, 10_000, b.N)
	m := startLoad(b, c, &calls)
	b.SetParallelism(128)
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			t, err := f.Next(ctx)
			if err != nil {
				b.Error(err)
				return
			}
			t.Done()
		}
	})
	m.report(b.N, "pair")
}

// BenchmarkFrontierMemory reports what Redis holds for a frontier's
// queued URLs, from INFO memory: 10,000 hosts of one URL each, then of ten
// URLs each (the URLs of package frontier's BenchmarkMemory, 58 to 66
// bytes, a host's sharing its origin). B/URL is the memory over the URLs,
// hosts and all; B/URL-alone what each URL beyond a host's first adds;
// B/host-alone what a host with one URL costs beyond that URL. With
// Dedup, each includes the seen filter.
//
//	go test -run '^$' -bench FrontierMemory -benchtime 1x
func BenchmarkFrontierMemory(b *testing.B) {
	c := newClient(b)
	ctx := context.Background()
	const hosts = 10_000
	for _, dedup := range []bool{false, true} {
		b.Run(fmt.Sprintf("Dedup=%v", dedup), func(b *testing.B) {
			fillHosts := func(perHost int) float64 {
				if err := c.FlushAll(ctx).Err(); err != nil {
					b.Fatal(err)
				}
				f := NewFrontier(c, allowAll{}, frontier.Options{MaxURLs: 1 << 30, Dedup: dedup}, WithKeyPrefix("polite"), WithTimeout(time.Minute))
				defer f.Close()
				before := usedMemory(b, c)
				fill(b, f, hosts, hosts*perHost)
				return float64(usedMemory(b, c) - before)
			}
			for range b.N {
				one, ten := fillHosts(1), fillHosts(10)
				perURL := (ten - one) / (9 * hosts)
				b.ReportMetric(ten/(10*hosts), "B/URL")
				b.ReportMetric(perURL, "B/URL-alone")
				b.ReportMetric(one/hosts-perURL, "B/host-alone")
			}
		})
	}
}
