package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/internal/cputime"
)

// crawlBenchWindow is how long BenchmarkCrawlThroughput measures, once every
// host has had a page requested.
var crawlBenchWindow = flag.Duration("crawlbench.window", 20*time.Second,
	"BenchmarkCrawlThroughput: how long to measure after every host has had a page requested")

// crawlBenchHosts are the numbers of hosts BenchmarkCrawlThroughput crawls.
var crawlBenchHosts = flag.String("crawlbench.hosts", "100,1000",
	"BenchmarkCrawlThroughput: the numbers of hosts to crawl, separated by commas")

// crawlBenchDelay is the base delay of BenchmarkCrawlThroughput, as -delay
// sets it; the jitter is the default, 0.5.
const crawlBenchDelay = 200 * time.Millisecond

// BenchmarkCrawlThroughput measures how close the crawler comes to the
// politeness limit: with n hosts, a base delay d and the default jitter of
// 0.5, whose mean factor is 1.25, no crawl can start more than
// n / (1.25·d) requests a second. It serves n host names from one loopback
// listener, each an endless web, seeds the crawler with every host's front
// page, and crawls through a transport like crawl's, with -delay 200ms.
// The measure starts when every host has had a page requested, that is,
// when every robots.txt has been fetched, and lasts -crawlbench.window.
// It crawls 100 and 1,000 hosts, or the numbers -crawlbench.hosts gives,
// with 16 and 64 workers.
//
// Metrics: req/s, the requests that started on the wire in the window
// (robots.txt fetches included), per second; limit-ratio, req/s over the
// limit; warmup-s, the time before the window; cpu-cores, the process's
// CPU time over the window's wall time (servers, transport and crawler
// together); other-cores, the CPU the rest of the machine used meanwhile,
// steal included, where /proc/stat tells it, to show when other work
// competed with the benchmark; min-gap-ms, the least gap between two starts
// to one host as the wire recorder saw them, at or above the base delay but
// for the few milliseconds between a request's admission and its record.
//
// Run it once per case, as
//
//	go test -run '^$' -bench CrawlThroughput -benchtime 1x ./cmd/polite
func BenchmarkCrawlThroughput(b *testing.B) {
	for _, f := range strings.Split(*crawlBenchHosts, ",") {
		hosts, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || hosts < 1 {
			b.Fatalf("-crawlbench.hosts: %q is not a number of hosts", f)
		}
		for _, workers := range []int{16, 64} {
			b.Run(fmt.Sprintf("hosts=%d/workers=%d", hosts, workers), func(b *testing.B) {
				web := startBenchWeb(b, hosts)
				var sum benchCrawl
				for range b.N {
					r := web.crawl(b, workers, *crawlBenchWindow)
					sum.requests += r.requests
					sum.window += r.window
					sum.warmup += r.warmup
					sum.cpu += r.cpu
					sum.machine += r.machine
					if sum.minGap == 0 || r.minGap < sum.minGap {
						sum.minGap = r.minGap
					}
				}
				rate := float64(sum.requests) / sum.window.Seconds()
				limit := float64(hosts) / (crawlBenchDelay.Seconds() * (1 + defaultPacing.Jitter/2))
				b.ReportMetric(rate, "req/s")
				b.ReportMetric(rate/limit, "limit-ratio")
				b.ReportMetric(sum.warmup.Seconds()/float64(b.N), "warmup-s")
				if sum.cpu > 0 {
					b.ReportMetric(sum.cpu.Seconds()/sum.window.Seconds(), "cpu-cores")
				}
				if sum.machine > 0 {
					b.ReportMetric((sum.machine-sum.cpu).Seconds()/sum.window.Seconds(), "other-cores")
				}
				b.ReportMetric(float64(sum.minGap)/float64(time.Millisecond), "min-gap-ms")
			})
		}
	}
}

// benchCrawl is what one crawl of BenchmarkCrawlThroughput measured.
type benchCrawl struct {
	requests int           // started on the wire in the window
	window   time.Duration // how long the window lasted
	warmup   time.Duration // from the start to the window
	cpu      time.Duration // process CPU time in the window; 0 if unknown
	machine  time.Duration // the machine's busy CPU time in the window, steal included; 0 if unknown
	minGap   time.Duration // least gap between two starts to one host
}

// benchWeb serves hosts host names, h0.bench.test to h<n-1>.bench.test, on
// one loopback listener. Each is an endless web: page /p/i links to
// /p/i+1 and /p/i+2 on its host and to /p/i+1 on two other hosts. Its
// robots.txt disallows /private/, which no page links to.
type benchWeb struct {
	hosts int
	addr  string // the listener's address
	port  string
}

func startBenchWeb(b *testing.B, hosts int) *benchWeb {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	w := &benchWeb{hosts: hosts, addr: ln.Addr().String()}
	_, w.port, _ = net.SplitHostPort(w.addr)
	srv := &http.Server{Handler: w, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	return w
}

// url returns the URL of page i of host h.
func (w *benchWeb) url(h, i int) string {
	return fmt.Sprintf("http://h%d.bench.test:%s/p/%d", h, w.port, i)
}

// ServeHTTP implements http.Handler.
func (w *benchWeb) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	name, _, _ := strings.Cut(r.Host, ".")
	h, err := strconv.Atoi(strings.TrimPrefix(name, "h"))
	if err != nil || h < 0 || h >= w.hosts {
		http.NotFound(rw, r)
		return
	}
	if r.URL.Path == "/robots.txt" {
		rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(rw, "User-agent: *\nDisallow: /private/\n")
		return
	}
	i, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/p/"))
	if err != nil || i < 0 {
		http.NotFound(rw, r)
		return
	}
	rw.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(rw, "<!doctype html><html><head><title>h%d page %d</title></head><body>\n", h, i)
	for _, l := range []string{
		fmt.Sprintf("/p/%d", i+1),
		fmt.Sprintf("/p/%d", i+2),
		w.url((h+1)%w.hosts, i+1),
		w.url((h+w.hosts/2+1)%w.hosts, i+1),
	} {
		fmt.Fprintf(rw, "<a href=%q>%s</a>\n", l, l)
	}
	fmt.Fprint(rw, "</body></html>\n")
}

// transport returns a base transport like crawl's, which dials the
// listener for every host.
func (w *benchWeb) transport() *http.Transport {
	d := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, w.addr)
		},
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
	}
}

// crawl crawls w with workers workers, as `polite crawl -delay 200ms
// -concurrency workers` would with no limit on pages or depth, until the
// window after the warm-up has passed.
func (w *benchWeb) crawl(b *testing.B, workers int, window time.Duration) benchCrawl {
	b.Helper()
	base := w.transport()
	defer base.CloseIdleConnections()
	warm := &warmWatch{base: base, want: w.hosts, warm: make(chan struct{})}
	wire := &wireRecorder{base: warm}
	tr := polite.New(wire, polite.WithUserAgent(defaultUA), polite.WithPacing(polite.PacingPolicy{BaseDelay: crawlBenchDelay}))
	seeds := make([]*url.URL, w.hosts)
	for h := range seeds {
		u, err := url.Parse(w.url(h, 0))
		if err != nil {
			b.Fatal(err)
		}
		seeds[h] = u
	}
	opts := crawlOptions{maxPages: 1 << 30, maxDepth: 1 << 30, concurrency: workers, retries: 1}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var warmAt, stopAt time.Time
	var cpu0, cpu1, machine0, machine1 time.Duration
	var cpuOK, machineOK bool
	var watching sync.WaitGroup
	watching.Go(func() {
		select {
		case <-warm.warm:
		case <-ctx.Done():
			return
		}
		warmAt = time.Now()
		cpu0, cpuOK = cputime.Process()
		machine0, machineOK = machineCPU()
		time.Sleep(window)
		stopAt = time.Now()
		cpu1, _ = cputime.Process()
		machine1, _ = machineCPU()
		cancel()
	})

	enc := json.NewEncoder(io.Discard) // as crawl writes its records
	res := crawl(ctx, tr, wire, opts, seeds, io.Discard, func(r pageRecord) { enc.Encode(r) })
	cancel()
	watching.Wait()
	if warmAt.IsZero() {
		b.Fatal("the crawl ended before every host had a page requested")
	}

	r := benchCrawl{window: stopAt.Sub(warmAt), warmup: warmAt.Sub(res.start)}
	if cpuOK {
		r.cpu = cpu1 - cpu0
		if machineOK {
			r.machine = machine1 - machine0
		}
	}
	last := make(map[string]time.Time)
	for _, q := range res.wire { // ordered by start
		if !q.Start.Before(warmAt) && q.Start.Before(stopAt) {
			r.requests++
		}
		if prev, ok := last[q.Host]; ok && (r.minGap == 0 || q.Start.Sub(prev) < r.minGap) {
			r.minGap = q.Start.Sub(prev)
		}
		last[q.Host] = q.Start
	}
	return r
}

// A warmWatch is a RoundTripper that closes warm once want hosts have each
// had a request other than for robots.txt.
type warmWatch struct {
	base http.RoundTripper
	want int
	warm chan struct{}

	mu   sync.Mutex // guards seen
	seen map[string]bool
}

// RoundTrip implements http.RoundTripper.
func (w *warmWatch) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Path != "/robots.txt" {
		w.mu.Lock()
		if len(w.seen) < w.want {
			if w.seen == nil {
				w.seen = make(map[string]bool)
			}
			w.seen[req.URL.Host] = true
			if len(w.seen) == w.want {
				close(w.warm)
			}
		}
		w.mu.Unlock()
	}
	return w.base.RoundTrip(req)
}

// machineCPU returns the busy CPU time of the whole machine so far, steal
// included, from Linux's /proc/stat, which counts in hundredths of a
// second.
func machineCPU() (time.Duration, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, false
	}
	var busy int64
	for i, v := range f[1:9] { // user nice system idle iowait irq softirq steal
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, false
		}
		if i != 3 && i != 4 {
			busy += n
		}
	}
	return time.Duration(busy) * 10 * time.Millisecond, true
}
