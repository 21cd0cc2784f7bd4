package frontier_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"runtime"
	"testing"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/frontier"
	"github.com/polite-go/polite/internal/cputime"
)

// readyTransport is a Transport whose every host is ready, its robots.txt
// known and every URL allowed, at no cost: what is measured is the
// frontier.
type readyTransport struct{}

func (readyTransport) Ready(*http.Request) (polite.Decision, error) {
	return polite.Decision{RobotsKnown: true}, nil
}

func (readyTransport) Check(*http.Request) (polite.Decision, error) {
	return polite.Decision{Mode: polite.RobotsEnforce, Allowed: true}, nil
}

func (readyTransport) PacingKey(u *url.URL) string { return u.Hostname() }

// benchURL is URL i of host h: 58 to 66 bytes, a typical article URL.
func benchURL(h, i int) string {
	return fmt.Sprintf("https://www.host-%d.example.com/articles/2024/%d/a-page-title", h, i)
}

// heapAfterGC returns the live heap after two collections.
func heapAfterGC() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkMemory queues 1,000,000 URLs over 100,000 hosts, ten a host,
// and reports the live heap it takes, per URL and per host: B/URL is the
// heap over the URLs, host and all; B/host-alone is what a host with one
// URL costs beyond that URL, from a second frontier of 100,000 hosts with
// one URL each; B/URL-alone is what each further URL adds. The goal is at
// most 100 B per URL plus 1 KiB per host.
//
//	go test -run '^$' -bench Memory -benchtime 1x ./frontier
func BenchmarkMemory(b *testing.B) {
	const hosts = 100_000
	fill := func(perHost int) (*frontier.Frontier, uint64) {
		before := heapAfterGC()
		f := frontier.New(readyTransport{}, frontier.Options{})
		ctx := context.Background()
		for i := range perHost {
			for h := range hosts {
				if _, err := f.Add(ctx, benchURL(h, i)); err != nil {
					b.Fatal(err)
				}
			}
		}
		return f, heapAfterGC() - before
	}
	for range b.N {
		one, oneBytes := fill(1)
		runtime.KeepAlive(one)
		one = nil
		ten, tenBytes := fill(10)
		runtime.KeepAlive(ten)

		perURL := float64(tenBytes-oneBytes) / float64(9*hosts)
		b.ReportMetric(float64(tenBytes)/float64(10*hosts), "B/URL")
		b.ReportMetric(perURL, "B/URL-alone")
		b.ReportMetric(float64(oneBytes)/hosts-perURL, "B/host-alone")
		b.ReportMetric(float64(tenBytes)/(1<<20), "MiB")
	}
}

// BenchmarkNext measures Next and Requeue in turn over n hosts that are
// all ready, ten URLs each: each turn takes the host at the top of the
// heap and puts it back at the bottom, O(log hosts).
//
//	go test -run '^$' -bench Next -benchmem ./frontier
func BenchmarkNext(b *testing.B) {
	for _, hosts := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("hosts=%d", hosts), func(b *testing.B) {
			f := frontier.New(readyTransport{}, frontier.Options{})
			ctx := context.Background()
			for i := range 10 {
				for h := range hosts {
					f.Add(ctx, benchURL(h, i))
				}
			}
			cputime.Loop(b, func() {
				t, err := f.Next(ctx)
				if err != nil {
					b.Fatal(err)
				}
				t.Requeue()
			})
		})
	}
}
