package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/polite-go/polite"
)

// loopback measures requests per second through an http.Client whose
// transport is the bare http.Transport or PoliteTransport over one, with
// pacing off, across many hosts of the local site. Rounds alternate the two
// (bare, polite, polite, bare, …) so that drift in the machine's speed
// falls on both; the figure is the median of the per-round ratios.
func loopback(args []string) error {
	fs := flag.NewFlagSet("loopback", flag.ExitOnError)
	hosts := fs.Int("hosts", 1000, "hosts of the site")
	workers := fs.Int("workers", 32, "goroutines sending requests")
	dur := fs.Duration("dur", 2*time.Second, "length of one measurement")
	rounds := fs.Int("rounds", 5, "measurements of each transport")
	rules := fs.Int("rules", 0, "rules in each host's robots.txt; 0 serves 404")
	adaptive := fs.Bool("adaptive", false, "keep the latency-adaptive pace (2×latency); off, MaxDelay 0 turns it off too")
	fs.Parse(args)

	s, err := startSite()
	if err != nil {
		return err
	}
	defer s.close()
	cfg := siteConfig{PageBytes: 1024}
	if *rules > 0 {
		cfg.Robots = map[string]string{"": robotsWithRules(*rules)}
	}
	if err := s.configure(cfg); err != nil {
		return err
	}
	urls := make([]string, *hosts)
	for i := range urls {
		urls[i] = fmt.Sprintf("http://host-%d.test/articles/2024/a-page-title?id=42", i)
	}

	pacing := "pacing off (BaseDelay 0, MaxDelay 0)"
	if *adaptive {
		pacing = "latency-adaptive pace only (BaseDelay 0)"
	}
	fmt.Printf("loopback: %d hosts, %d workers, %v per measurement, robots.txt %s, %s\n", *hosts, *workers, *dur, robotsName(*rules), pacing)
	var ratios, bareRPS, politeRPS, bareCPU, politeCPU []float64
	for round := range *rounds {
		order := []bool{false, true}
		if round%2 == 1 {
			order = []bool{true, false}
		}
		var got [2]loopbackResult
		for _, usePolite := range order {
			rt := http.RoundTripper(s.transport())
			if usePolite {
				opts := []polite.Option{polite.WithUserAgent("BenchBot/1.0"), polite.WithBaseDelay(0),
					polite.WithJitter(0), polite.WithMaxHosts(2 * *hosts)}
				if !*adaptive {
					opts = append(opts, polite.WithMaxDelay(0)) // caps the latency-adaptive part at 0: no pacing at all
				}
				rt = polite.New(rt, opts...)
			}
			r, err := measureLoopback(&http.Client{Transport: rt}, urls, *workers, *dur)
			if err != nil {
				return err
			}
			rt.(interface{ CloseIdleConnections() }).CloseIdleConnections()
			i := 0
			if usePolite {
				i = 1
			}
			got[i] = r
		}
		ratio := got[1].rps / got[0].rps
		fmt.Printf("  round %d: bare %.0f req/s %.1fµs CPU/req; polite %.0f req/s %.1fµs CPU/req; ratio %.3f\n",
			round+1, got[0].rps, got[0].cpuPerReq, got[1].rps, got[1].cpuPerReq, ratio)
		ratios = append(ratios, ratio)
		bareRPS, politeRPS = append(bareRPS, got[0].rps), append(politeRPS, got[1].rps)
		bareCPU, politeCPU = append(bareCPU, got[0].cpuPerReq), append(politeCPU, got[1].cpuPerReq)
	}
	fmt.Printf("median: bare %.0f req/s, polite %.0f req/s; polite/bare %.3f (median of per-round ratios; min %.3f, max %.3f)\n",
		median(bareRPS), median(politeRPS), median(ratios), quantile(ratios, 0), quantile(ratios, 1))
	fmt.Printf("median CPU per request: bare %.1fµs, polite %.1fµs; polite/bare %.3f\n",
		median(bareCPU), median(politeCPU), median(politeCPU)/median(bareCPU))
	return nil
}

type loopbackResult struct {
	rps       float64
	cpuPerReq float64 // µs
}

// measureLoopback warms c up with one request to every URL, then has
// workers send requests for dur. Worker w takes URLs w, w+workers, …, so
// that no two workers share a host and the per-host in-flight limit never
// binds.
func measureLoopback(c *http.Client, urls []string, workers int, dur time.Duration) (loopbackResult, error) {
	fetch := func(u string) error {
		resp, err := c.Get(u)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s", u, resp.Status)
		}
		return nil
	}
	var firstErr error
	var errOnce sync.Once
	fail := func(err error) { errOnce.Do(func() { firstErr = err }) }
	run := func(stop func(n int) bool) int64 {
		var total atomic.Int64
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				n := 0
				for i := w; !stop(n); i += workers {
					if i >= len(urls) {
						i = w
					}
					if err := fetch(urls[i]); err != nil {
						fail(err)
						return
					}
					n++
				}
				total.Add(int64(n))
			})
		}
		wg.Wait()
		return total.Load()
	}
	perWorker := (len(urls) + workers - 1) / workers
	run(func(n int) bool { return n >= perWorker }) // warm-up: connections, robots.txt
	if firstErr != nil {
		return loopbackResult{}, firstErr
	}
	cpu0, t0 := cpuTime(), time.Now()
	deadline := t0.Add(dur)
	n := run(func(int) bool { return !time.Now().Before(deadline) })
	elapsed, cpu := time.Since(t0), cpuTime()-cpu0
	if firstErr != nil {
		return loopbackResult{}, firstErr
	}
	return loopbackResult{rps: float64(n) / elapsed.Seconds(), cpuPerReq: float64(cpu.Microseconds()) / float64(n)}, nil
}

// robotsWithRules returns a robots.txt whose "*" group has n rules, a
// quarter of them wildcards, none matching the URLs the benchmarks fetch:
// the file of the in-package benchmarks.
func robotsWithRules(n int) string {
	var b []byte
	b = append(b, "User-agent: otherbot\nDisallow: /\n\nUser-agent: *\n"...)
	for i := range n {
		switch {
		case i%4 == 3:
			switch i / 4 % 3 {
			case 0:
				b = fmt.Appendf(b, "Disallow: /*?sessionid%d=\n", i)
			case 1:
				b = fmt.Appendf(b, "Disallow: /*.ext%d$\n", i)
			default:
				b = fmt.Appendf(b, "Disallow: /search/*/page-%d\n", i)
			}
		case i%5 == 0:
			b = fmt.Appendf(b, "Allow: /section-%d/public/\n", i)
		default:
			b = fmt.Appendf(b, "Disallow: /section-%d/\n", i)
		}
	}
	return string(b)
}

func robotsName(rules int) string {
	if rules == 0 {
		return "404"
	}
	return fmt.Sprintf("of %d rules", rules)
}
