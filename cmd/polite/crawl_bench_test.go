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
	"testing"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/internal/cputime"
	"github.com/polite-go/polite/pace"
)

// crawlBenchPages is how many pages per host BenchmarkCrawlThroughput
// crawls: the crawl stops after hosts·pages requests.
var crawlBenchPages = flag.Int("crawlbench.pages", 30,
	"BenchmarkCrawlThroughput: requests per host the crawl may send before it stops")

// crawlBenchHosts are the numbers of hosts BenchmarkCrawlThroughput crawls.
var crawlBenchHosts = flag.String("crawlbench.hosts", "100",
	"BenchmarkCrawlThroughput: the numbers of hosts to crawl, separated by commas")

// crawlBenchWorkers are the numbers of workers BenchmarkCrawlThroughput
// crawls with.
var crawlBenchWorkers = flag.String("crawlbench.workers", "16",
	"BenchmarkCrawlThroughput: the numbers of workers, separated by commas")

// crawlBenchDelay is the base delay of BenchmarkCrawlThroughput, as -delay
// sets it; the jitter is the default, 0.5.
const crawlBenchDelay = 200 * time.Millisecond

// crawlBenchPaused is how many hosts of every hundred the paused cases of
// BenchmarkCrawlThroughput answer 429 with Retry-After: 3600.
const crawlBenchPaused = 10

// BenchmarkCrawlThroughput measures how close `polite crawl` comes to the
// politeness limit, from its first request to its last: with n healthy
// hosts, a base delay d and the default jitter of 0.5, whose mean factor is
// 1.25, no crawl can start more than n / (1.25·d) requests a second. It
// serves n host names from one loopback listener, each an endless web,
// seeds the crawler with every host's front page, and crawls through a
// transport like crawl's, with -delay 200ms, until it has sent
// n·-crawlbench.pages requests. In the paused cases, 10 hosts of every
// hundred answer every page 429 with Retry-After: 3600, and the limit is
// that of the others. It crawls 100 hosts with 16 workers, or the numbers
// -crawlbench.hosts and -crawlbench.workers give.
//
// Metrics: limit-ratio, the requests to healthy hosts that started on the
// wire (robots.txt fetches included), per second from the crawl's first
// request to its last, over the limit; req/s, the same per second;
// cpu-cores, the process's CPU time over that span (servers, transport and
// crawler together); other-cores, the CPU the rest of the machine used
// meanwhile, steal included, where /proc/stat tells it, to show when other
// work competed with the benchmark; min-gap-ms, the least gap between two
// starts to one host as the wire recorder saw them, at or above the base
// delay but for the few milliseconds between a request's admission and its
// record.
//
// Run it as
//
//	go test -run '^$' -bench CrawlThroughput -benchtime 1x -count 5 ./cmd/polite
func BenchmarkCrawlThroughput(b *testing.B) {
	for _, hosts := range benchCounts(b, "hosts", *crawlBenchHosts) {
		for _, workers := range benchCounts(b, "workers", *crawlBenchWorkers) {
			for _, paused := range []int{0, hosts * crawlBenchPaused / 100} {
				b.Run(fmt.Sprintf("hosts=%d/paused=%d/workers=%d", hosts, paused, workers), func(b *testing.B) {
					web := startBenchWeb(b, hosts, paused)
					var sum benchCrawl
					for range b.N {
						r := web.crawl(b, workers, hosts**crawlBenchPages)
						sum.requests += r.requests
						sum.span += r.span
						sum.cpu += r.cpu
						sum.machine += r.machine
						if sum.minGap == 0 || r.minGap < sum.minGap {
							sum.minGap = r.minGap
						}
					}
					rate := float64(sum.requests) / sum.span.Seconds()
					limit := float64(hosts-paused) / (crawlBenchDelay.Seconds() * (1 + defaultPacing.Jitter/2))
					b.ReportMetric(rate, "req/s")
					b.ReportMetric(rate/limit, "limit-ratio")
					if sum.cpu > 0 {
						b.ReportMetric(sum.cpu.Seconds()/sum.span.Seconds(), "cpu-cores")
					}
					if sum.machine > 0 {
						b.ReportMetric((sum.machine-sum.cpu).Seconds()/sum.span.Seconds(), "other-cores")
					}
					b.ReportMetric(float64(sum.minGap)/float64(time.Millisecond), "min-gap-ms")
				})
			}
		}
	}
}

// benchCounts parses the value of the flag -crawlbench.name, counts
// separated by commas.
func benchCounts(b *testing.B, name, value string) []int {
	var counts []int
	for _, f := range strings.Split(value, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			b.Fatalf("-crawlbench.%s: %q is not a count", name, f)
		}
		counts = append(counts, n)
	}
	return counts
}

// benchCrawl is what one crawl of BenchmarkCrawlThroughput measured.
type benchCrawl struct {
	requests int           // to healthy hosts, started on the wire
	span     time.Duration // from the first request's start to the last's
	cpu      time.Duration // process CPU time in the span; 0 if unknown
	machine  time.Duration // the machine's busy CPU time in the span, steal included; 0 if unknown
	minGap   time.Duration // least gap between two starts to one host
}

// benchWeb serves hosts host names, h0.bench.test to h<n-1>.bench.test, on
// one loopback listener. Each is an endless web: page /p/i links to
// /p/i+1 and /p/i+2 on its host and to /p/i+1 on two other hosts. Its
// robots.txt disallows /private/, which no page links to. The first paused
// hosts answer every page 429 with Retry-After: 3600.
type benchWeb struct {
	hosts  int
	paused int
	addr   string // the listener's address
	port   string
}

func startBenchWeb(b *testing.B, hosts, paused int) *benchWeb {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	w := &benchWeb{hosts: hosts, paused: paused, addr: ln.Addr().String()}
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

// host returns the number of the host named in r's Host header, or -1.
func (w *benchWeb) host(r *http.Request) int {
	name, _, _ := strings.Cut(r.Host, ".")
	h, err := strconv.Atoi(strings.TrimPrefix(name, "h"))
	if err != nil || h < 0 || h >= w.hosts {
		return -1
	}
	return h
}

// ServeHTTP implements http.Handler.
func (w *benchWeb) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	h := w.host(r)
	if h < 0 {
		http.NotFound(rw, r)
		return
	}
	if r.URL.Path == "/robots.txt" {
		rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(rw, "User-agent: *\nDisallow: /private/\n")
		return
	}
	if h < w.paused {
		rw.Header().Set("Retry-After", "3600")
		http.Error(rw, "paused", http.StatusTooManyRequests)
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
// -concurrency workers -max-pages pages` would with no limit on depth.
func (w *benchWeb) crawl(b *testing.B, workers, pages int) benchCrawl {
	b.Helper()
	base := w.transport()
	defer base.CloseIdleConnections()
	wire := &wireRecorder{base: base}
	tr := polite.New(wire, polite.WithUserAgent(defaultUA), polite.WithPacing(pace.Policy{BaseDelay: crawlBenchDelay}))
	seeds := make([]*url.URL, w.hosts)
	for h := range seeds {
		u, err := url.Parse(w.url(h, 0))
		if err != nil {
			b.Fatal(err)
		}
		seeds[h] = u
	}
	opts := crawlOptions{maxPages: pages, maxDepth: 1 << 30, concurrency: workers, retries: 1}

	cpu0, cpuOK := cputime.Process()
	machine0, machineOK := machineCPU()
	enc := json.NewEncoder(io.Discard) // as crawl writes its records
	res := crawl(context.Background(), tr, wire, opts, seeds, io.Discard, func(r pageRecord) { enc.Encode(r) })
	cpu1, _ := cputime.Process()
	machine1, _ := machineCPU()

	var r benchCrawl
	var first, last time.Time
	prev := make(map[string]time.Time)
	for _, q := range res.wire { // ordered by start
		if first.IsZero() {
			first = q.Start
		}
		last = q.Start
		if prev, ok := prev[q.Host]; ok && (r.minGap == 0 || q.Start.Sub(prev) < r.minGap) {
			r.minGap = q.Start.Sub(prev)
		}
		prev[q.Host] = q.Start
		if h, _ := strconv.Atoi(strings.TrimPrefix(strings.Split(q.Host, ".")[0], "h")); h >= w.paused {
			r.requests++
		}
	}
	r.span = last.Sub(first)
	// The CPU is measured over the crawl's wall time, a little longer than
	// the span; it is the share of a core the span kept busy.
	wall := res.end.Sub(res.start)
	if cpuOK {
		r.cpu = time.Duration(float64(cpu1-cpu0) * r.span.Seconds() / wall.Seconds())
		if machineOK {
			r.machine = time.Duration(float64(machine1-machine0) * r.span.Seconds() / wall.Seconds())
		}
	}
	return r
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
