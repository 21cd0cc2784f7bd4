package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"runtime"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/pace"
)

// loopback measures requests per second through an http.Client whose
// transport is the bare http.Transport or PoliteTransport over one, with
// pacing off, across many hosts of the local site. A control is measured
// too: a second bare transport, whose ratio to the first is what the method
// cannot tell from 1, or (-control) a wrapper that only passes requests on,
// or one that passes on a copy with the User-Agent set, to tell those costs
// apart from the rest of polite's. Each transport is built and warmed up
// once (one request to every host: connections open, robots.txt cached);
// then every round measures each for -dur, in a random order, and the
// figure is the median of the per-round ratios. Short rounds in many random
// orders let this machine's bursts of steal time fall on all three alike.
//
// The requests to the bare transports carry the User-Agent polite sends,
// as a crawler without polite must set it to name itself, so that both
// send the same bytes; -bare-ua=false sends them with none, and Go's own.
func loopback(args []string) error {
	fs := flag.NewFlagSet("loopback", flag.ExitOnError)
	hosts := fs.Int("hosts", 1000, "hosts of the site")
	workers := fs.Int("workers", 32, "goroutines sending requests")
	dur := fs.Duration("dur", 500*time.Millisecond, "length of one measurement")
	rounds := fs.Int("rounds", 30, "measurements of each transport")
	rules := fs.Int("rules", 0, "rules in each host's robots.txt; 0 serves 404")
	adaptive := fs.Bool("adaptive", false, "keep the latency-adaptive pace (2×latency); off, MaxDelay 0 turns it off too")
	api := fs.Bool("api", false, "build the transport with polite.APIDefaults() (robots.txt off, no pacing until the server signals) instead")
	ua := fs.Bool("ua", false, "send requests to polite with a User-Agent of their own, which it then does not add on a copy")
	bareUA := fs.Bool("bare-ua", true, "send requests to the bare transports with the User-Agent polite sends, as a crawler without polite sets it; false sends none, and Go sends its own")
	siteCPUs := fs.String("site-cpus", "", "run the site on these CPUs (taskset -c syntax); with the client on the others (GOMAXPROCS=1 taskset -c 0), each has a core of its own")
	control := fs.String("control", "bare", "the control: a second bare transport (bare), a wrapper that passes each request on (wrap), or one that passes on a copy with the User-Agent set, as polite does (copy)")
	timeout := fs.Duration("timeout", 0, "http.Client.Timeout of every client; 0 for none")
	deadline := fs.Duration("deadline", 0, "a deadline this far ahead on each request's context; 0 for none")
	only := fs.String("only", "", "measure only this transport (bare, control or polite), to profile it alone")
	fs.Parse(args)

	s, err := startSiteOn(*siteCPUs)
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

	const botUA = "BenchBot/1.0"
	opts := []polite.Option{polite.WithUserAgent(botUA), polite.WithPacing(pace.Policy{BaseDelay: pace.None, Jitter: pace.None}),
		polite.WithLimits(polite.Limits{MaxKeys: 2 * *hosts, MaxOrigins: 2 * *hosts})}
	pacing := "pacing off (BaseDelay 0, MaxDelay 0)"
	switch {
	case *api:
		pacing = "polite.APIDefaults()"
		opts = []polite.Option{polite.WithUserAgent(botUA), polite.APIDefaults(), polite.WithLimits(polite.Limits{MaxKeys: 2 * *hosts, MaxOrigins: 2 * *hosts})}
	case *adaptive:
		pacing = "latency-adaptive pace only (BaseDelay 0)"
	default:
		opts = append(opts, polite.WithPacing(pace.Policy{MaxDelay: pace.None})) // caps the latency-adaptive part at 0: no pacing at all
	}
	politeUA, agent := "", "none (the transport adds its own on a copy)"
	if *ua {
		politeUA, agent = botUA, "the request's own"
	}
	bareAgent := "the same, set on each request"
	plainUA := botUA
	if !*bareUA {
		plainUA, bareAgent = "", "none (Go's default)"
	}
	fmt.Printf("loopback: %d hosts, %d workers, %d rounds of %v, robots.txt %s, %s\n",
		*hosts, *workers, *rounds, *dur, robotsName(*rules), pacing)
	fmt.Printf("User-Agent: to polite %s; to bare %s; http.Client.Timeout %v; context deadline %v; control %s\n", agent, bareAgent, *timeout, *deadline, *control)

	type subject struct {
		name       string
		rt         http.RoundTripper
		ua         string // the requests' own User-Agent; "" for none
		rps, cpu   []float64
		allocs, by float64
		requests   int64
	}
	send := func(x *subject) sender {
		return sender{c: &http.Client{Transport: x.rt, Timeout: *timeout}, ua: x.ua, deadline: *deadline}
	}
	var controlRT http.RoundTripper = s.transport()
	controlUA := plainUA
	switch *control {
	case "bare":
	case "wrap":
		controlRT = passOn{controlRT}
	case "copy":
		controlRT, controlUA = addUA{controlRT, botUA}, ""
	default:
		return fmt.Errorf("-control %q: want bare, wrap or copy", *control)
	}
	subjects := []*subject{
		{name: "bare", rt: s.transport(), ua: plainUA},
		{name: "control", rt: controlRT, ua: controlUA},
		{name: "polite", rt: polite.New(s.transport(), opts...), ua: politeUA},
	}
	if *only != "" {
		subjects = slices.DeleteFunc(subjects, func(x *subject) bool { return x.name != *only })
		if len(subjects) == 0 {
			return fmt.Errorf("-only %q: want bare, control or polite", *only)
		}
	}
	for _, x := range subjects {
		defer closeIdle(x.rt)
		// The label goes to every goroutine started under it, the
		// connections' readers and writers too: a CPU profile
		// (BENCH_CPUPROFILE) splits by transport with -tagfocus.
		var err error
		pprof.Do(context.Background(), pprof.Labels("transport", x.name), func(context.Context) {
			err = warmUp(send(x), urls, *workers)
		})
		if err != nil {
			return err
		}
	}
	var ratios, controls []float64
	for range *rounds {
		got := map[string]loopbackResult{}
		for _, i := range rand.Perm(len(subjects)) {
			x := subjects[i]
			var r loopbackResult
			var err error
			pprof.Do(context.Background(), pprof.Labels("transport", x.name), func(context.Context) {
				r, err = measureLoopback(send(x), urls, *workers, *dur)
			})
			if err != nil {
				return err
			}
			x.requests += r.requests
			x.rps, x.cpu = append(x.rps, r.rps), append(x.cpu, r.cpuPerReq)
			x.allocs, x.by = r.allocsPerReq, r.bytesPerReq
			got[x.name] = r
		}
		if len(subjects) == 3 {
			ratios = append(ratios, got["polite"].rps/got["bare"].rps)
			controls = append(controls, got["control"].rps/got["bare"].rps)
		}
	}
	for _, x := range subjects {
		fmt.Printf("  %-7s %6.0f req/s (quartiles %.0f–%.0f), %5.1fµs CPU per request, %.1f allocations and %.0f B per request; %d requests\n",
			x.name, median(x.rps), quantile(x.rps, 0.25), quantile(x.rps, 0.75), median(x.cpu), x.allocs, x.by, x.requests)
	}
	if len(subjects) == 3 {
		fmt.Printf("polite/bare %.3f (median of %d per-round ratios; quartiles %.3f–%.3f); control/bare %.3f (quartiles %.3f–%.3f)\n",
			median(ratios), len(ratios), quantile(ratios, 0.25), quantile(ratios, 0.75),
			median(controls), quantile(controls, 0.25), quantile(controls, 0.75))
		fmt.Printf("CPU per request, polite/bare %.3f (+%.1fµs)\n",
			median(subjects[2].cpu)/median(subjects[0].cpu), median(subjects[2].cpu)-median(subjects[0].cpu))
	}
	return nil
}

// passOn is the least a RoundTripper that wraps another can do. To
// http.Client it is a RoundTripper it does not know, like PoliteTransport.
type passOn struct{ base http.RoundTripper }

func (t passOn) RoundTrip(r *http.Request) (*http.Response, error) { return t.base.RoundTrip(r) }
func (t passOn) CloseIdleConnections()                             { closeIdle(t.base) }

// addUA passes on a copy of each request with the User-Agent set, as
// PoliteTransport does for a request that has none.
type addUA struct {
	base http.RoundTripper
	ua   string
}

func (t addUA) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("User-Agent", t.ua)
	return t.base.RoundTrip(r)
}
func (t addUA) CloseIdleConnections() { closeIdle(t.base) }

func closeIdle(rt http.RoundTripper) {
	if c, ok := rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

type loopbackResult struct {
	requests     int64
	rps          float64
	cpuPerReq    float64 // µs
	allocsPerReq float64
	bytesPerReq  float64
}

// sender sends the benchmark's requests through one transport.
type sender struct {
	c        *http.Client
	ua       string        // each request's User-Agent; "" for none
	deadline time.Duration // how far ahead each request's context ends; 0 for never
}

// fetch gets u and reads the body.
func (s sender) fetch(u string) error {
	ctx := context.Background()
	if s.deadline > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.deadline)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	if s.ua != "" {
		req.Header.Set("User-Agent", s.ua)
	}
	resp, err := s.c.Do(req)
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

// work has workers send requests until stop says so, and returns how many
// they sent. Worker w takes URLs w, w+workers, …, so that no two workers
// share a host and the per-host in-flight limit never binds.
func work(s sender, urls []string, workers int, stop func(n int) bool) (int64, error) {
	var total atomic.Int64
	var firstErr error
	var errOnce sync.Once
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			n := 0
			for i := w; !stop(n); i += workers {
				if i >= len(urls) {
					i = w
				}
				if err := s.fetch(urls[i]); err != nil {
					errOnce.Do(func() { firstErr = err })
					return
				}
				n++
			}
			total.Add(int64(n))
		})
	}
	wg.Wait()
	return total.Load(), firstErr
}

// warmUp sends one request to every URL: connections open, robots.txt cached.
func warmUp(s sender, urls []string, workers int) error {
	perWorker := (len(urls) + workers - 1) / workers
	_, err := work(s, urls, workers, func(n int) bool { return n >= perWorker })
	return err
}

// measureLoopback has workers send requests through s for dur.
func measureLoopback(s sender, urls []string, workers int, dur time.Duration) (loopbackResult, error) {
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0, t0 := cpuTime(), time.Now()
	deadline := t0.Add(dur)
	n, err := work(s, urls, workers, func(int) bool { return !time.Now().Before(deadline) })
	elapsed, cpu := time.Since(t0), cpuTime()-cpu0
	runtime.ReadMemStats(&m1)
	if err != nil {
		return loopbackResult{}, err
	}
	return loopbackResult{
		requests:     n,
		rps:          float64(n) / elapsed.Seconds(),
		cpuPerReq:    float64(cpu.Microseconds()) / float64(n),
		allocsPerReq: float64(m1.Mallocs-m0.Mallocs) / float64(n),
		bytesPerReq:  float64(m1.TotalAlloc-m0.TotalAlloc) / float64(n),
	}, nil
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
