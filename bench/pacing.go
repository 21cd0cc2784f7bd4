package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/pace"
)

// pacing measures, on the wall clock, the start-to-start gaps of requests
// to one host ("focal.test") paced at -pace with jitter 0: from one
// goroutine, from -queued goroutines at once, and from as many while
// -background other hosts are crawled too, each at its own robots.txt
// Crawl-delay. A start is taken twice: when the base transport is called
// (the client's start) and when the site receives the request.
func pacing(args []string) error {
	fs := flag.NewFlagSet("pacing", flag.ExitOnError)
	gap := fs.Duration("pace", 20*time.Millisecond, "base delay of the focal host")
	n := fs.Int("n", 200, "gaps measured on the focal host per scenario")
	queued := fs.Int("queued", 64, "goroutines queued on the focal host")
	background := fs.Int("background", 1000, "other hosts crawled at once")
	bgDelay := fs.Duration("bg-delay", time.Second, "Crawl-delay of the other hosts")
	bgQueued := fs.Int("bg-queued", 2, "goroutines queued on each other host")
	fs.Parse(args)

	s, err := startSite()
	if err != nil {
		return err
	}
	defer s.close()
	err = s.configure(siteConfig{PageBytes: 1024, Record: true, Robots: map[string]string{
		"focal.test": "",
		"":           fmt.Sprintf("User-agent: *\nCrawl-delay: %g\n", bgDelay.Seconds()),
	}})
	if err != nil {
		return err
	}
	fmt.Printf("pacing: focal host paced at %v, jitter 0; %d gaps per scenario\n", *gap, *n)

	scenarios := []struct {
		name       string
		goroutines int
		background int
	}{
		{"1 goroutine", 1, 0},
		{fmt.Sprintf("%d goroutines queued", *queued), *queued, 0},
		{fmt.Sprintf("%d goroutines queued, %d other hosts at Crawl-delay %v with %d goroutines each", *queued, *background, *bgDelay, *bgQueued), *queued, *background},
	}
	for _, sc := range scenarios {
		rec := &startRecorder{base: s.transport(), t0: time.Now(), starts: map[string][]time.Duration{}}
		tr := polite.New(rec, polite.WithUserAgent("BenchBot/1.0"),
			polite.WithPacing(pace.Policy{BaseDelay: baseDelay(*gap), Jitter: pace.None}),
			polite.WithLimits(polite.Limits{MaxKeys: 2*sc.background + 10, MaxOrigins: 2*sc.background + 10}))
		c := &http.Client{Transport: tr}
		if _, err := s.arrivals(); err != nil { // forget earlier scenarios
			return err
		}

		stopBG := make(chan struct{})
		var bg sync.WaitGroup
		for h := range sc.background {
			for range *bgQueued {
				bg.Go(func() {
					for i := 0; ; i++ {
						select {
						case <-stopBG:
							return
						default:
						}
						get(c, fmt.Sprintf("http://bg-%d.test/page/%d", h, i))
					}
				})
			}
		}
		if sc.background > 0 {
			time.Sleep(*bgDelay + time.Second) // past every robots.txt fetch and first page
		}

		var issued atomic.Int64
		var focal sync.WaitGroup
		for range sc.goroutines {
			focal.Go(func() {
				for {
					i := issued.Add(1)
					if i > int64(*n) { // n requests and the robots.txt fetch: n gaps
						return
					}
					get(c, fmt.Sprintf("http://focal.test/page/%d", i))
				}
			})
		}
		focal.Wait()
		close(stopBG)
		bg.Wait()
		tr.CloseIdleConnections()

		log, err := s.arrivals()
		if err != nil {
			return err
		}
		served := map[string][]time.Duration{}
		for _, a := range log {
			served[a.Host] = append(served[a.Host], a.At)
		}
		fmt.Printf("%s:\n", sc.name)
		rec.mu.Lock()
		fmt.Printf("  focal, client starts: %v\n", summarise(gapsOf(rec.starts["focal.test"]), *gap))
		rec.mu.Unlock()
		fmt.Printf("  focal, site arrivals: %v\n", summarise(gapsOf(sorted(served["focal.test"])), *gap))
		if sc.background > 0 {
			var clientGaps, siteGaps []float64
			rec.mu.Lock()
			for host, ts := range rec.starts {
				if strings.HasPrefix(host, "bg-") {
					clientGaps = append(clientGaps, gapsOf(ts)...)
				}
			}
			rec.mu.Unlock()
			for host, ts := range served {
				if strings.HasPrefix(host, "bg-") {
					siteGaps = append(siteGaps, gapsOf(sorted(ts))...)
				}
			}
			fmt.Printf("  others, client starts: %v\n", summarise(clientGaps, *bgDelay))
			fmt.Printf("  others, site arrivals: %v\n", summarise(siteGaps, *bgDelay))
		}
	}
	return nil
}

// get fetches u and discards the answer.
func get(c *http.Client, u string) {
	resp, err := c.Get(u)
	if err != nil {
		return
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

func sorted(ts []time.Duration) []time.Duration {
	ts = slices.Clone(ts)
	slices.Sort(ts)
	return ts
}

// startRecorder is a base transport that notes when each request to a host
// starts, on the monotonic clock, before passing it on.
type startRecorder struct {
	base http.RoundTripper
	t0   time.Time

	mu     sync.Mutex // guards starts
	starts map[string][]time.Duration
}

func (r *startRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	at := time.Since(r.t0)
	r.mu.Lock()
	r.starts[req.URL.Hostname()] = append(r.starts[req.URL.Hostname()], at)
	r.mu.Unlock()
	return r.base.RoundTrip(req)
}

func (r *startRecorder) CloseIdleConnections() {
	closeIdle(r.base)
}
