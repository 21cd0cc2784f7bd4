package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The fleet benchmarks run politefleet as the README shows it: separate
// processes (this test binary run again with childEnv set, which runs
// main's run with the arguments in childArgs) on one redis-server,
// crawling a web of 12 hosts on loopback addresses 127.0.0.2 to
// 127.0.0.13, each its own host name and so its own pacing key. They are
// measurements, not tests: run them with
//
//	go test -run '^$' -bench Fleet -benchtime 1x -count 5 ./cmd/politefleet
const (
	childEnv  = "POLITEFLEET_CHILD"      // set in a process of the fleet
	childArgs = "POLITEFLEET_CHILD_ARGS" // its arguments, separated by tabs

	webHosts = 12
	webPages = 40 // a host's pages, /p0 to /p39, each linking to two more and to /private/x
	webPace  = 300 * time.Millisecond
	webProcs = 3
	webWork  = 4 // workers a process
)

// TestMain runs a process of a benchmark's fleet, when it is one.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		baseTransport = stampStart{http.DefaultTransport}
		os.Exit(run(context.Background(), strings.Split(os.Getenv(childArgs), "\t"), os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// stampStart sends each request with the instant it started, when polite
// handed it to its base, as the X-Start header (Unix ns): the hosts judge
// the gaps between starts by it, which the scheduling of a loaded machine
// delays less than their arrival.
type stampStart struct{ base http.RoundTripper }

func (s stampStart) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.Header.Set("X-Start", strconv.FormatInt(time.Now().UnixNano(), 10))
	return s.base.RoundTrip(r)
}

// A hit is a request as a host of the web saw it: when it came, and when
// its process started it.
type hit struct {
	host, path string
	at, start  time.Time
}

// web is the benchmarks' web: webHosts hosts, each with robots.txt
// disallowing /private/ and webPages pages, each linking to two more and
// to /private/x.
type web struct {
	seeds []string

	mu   sync.Mutex // guards hits
	hits []hit
}

// startWeb serves the web until b ends, each page after latency.
func startWeb(b *testing.B, latency time.Duration) *web {
	w := &web{}
	for h := range webHosts {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.%d:0", h+2))
		if err != nil {
			b.Skip("no loopback addresses beyond 127.0.0.1:", err)
		}
		host := l.Addr().String()
		srv := &http.Server{Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			h := hit{host: host, path: r.URL.Path, at: time.Now()}
			if ns, err := strconv.ParseInt(r.Header.Get("X-Start"), 10, 64); err == nil {
				h.start = time.Unix(0, ns)
			}
			w.mu.Lock()
			w.hits = append(w.hits, h)
			w.mu.Unlock()
			if r.URL.Path == "/robots.txt" {
				fmt.Fprint(rw, "User-agent: *\nDisallow: /private/\n")
				return
			}
			time.Sleep(latency)
			n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/p"))
			for _, next := range []int{2*n + 1, 2*n + 2} {
				if next < webPages {
					fmt.Fprintf(rw, `<a href="/p%d">page %d</a> `, next, next)
				}
			}
			fmt.Fprint(rw, `<a href="/private/x">private</a>`)
		})}
		go srv.Serve(l)
		b.Cleanup(func() { srv.Close() })
		w.seeds = append(w.seeds, "http://"+host+"/p0")
	}
	return w
}

// A child is a process of the fleet.
type child struct {
	cmd   *exec.Cmd
	mu    sync.Mutex // guards lines
	lines int        // pages it printed
	done  chan struct{}
}

// startChild starts a process of the fleet with args.
func startChild(b *testing.B, args []string) *child {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1", childArgs+"="+strings.Join(args, "\t"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	c := &child{cmd: cmd, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		s := bufio.NewScanner(out)
		for s.Scan() {
			if !strings.HasPrefix(s.Text(), "refused") {
				c.mu.Lock()
				c.lines++
				c.mu.Unlock()
			}
		}
	}()
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return c
}

// pages returns the pages c printed.
func (c *child) pages() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lines
}

// A crawl is what the web saw of one crawl, and what it makes of it.
type crawl struct {
	pages, requests, dups, missing, private int
	ratio                                   float64       // requests a second over the politeness limit
	minGap, maxGap                          time.Duration // the least and the most gap between two starts at a host
	minArrival                              time.Duration // the least gap between two arrivals at a host
}

// judge reads the web's hits: pages fetched, twice or not at all, requests
// over the politeness limit (robots.txt included, from the first start to
// the last, the limit a host per mean pace: BaseDelay times 1.25 for the
// default jitter of 0.5), and the least and most gaps between starts at a
// host, and the least between arrivals.
func (w *web) judge() crawl {
	w.mu.Lock()
	defer w.mu.Unlock()
	var c crawl
	seen := map[string]int{}
	byHost := map[string][]time.Time{}
	arrivals := map[string][]time.Time{}
	for _, h := range w.hits {
		byHost[h.host] = append(byHost[h.host], h.start)
		arrivals[h.host] = append(arrivals[h.host], h.at)
		switch {
		case h.path == "/robots.txt":
		case strings.HasPrefix(h.path, "/private/"):
			c.private++
		default:
			seen[h.host+h.path]++
		}
	}
	c.requests = len(w.hits)
	for _, n := range seen {
		c.pages++
		c.dups += n - 1
	}
	c.missing = webHosts*webPages - c.pages
	c.minGap, c.minArrival = time.Hour, time.Hour
	first, last := w.hits[0].start, w.hits[0].start
	for host, at := range byHost {
		slices.SortFunc(at, func(a, b time.Time) int { return a.Compare(b) })
		for i := 1; i < len(at); i++ {
			c.minGap = min(c.minGap, at[i].Sub(at[i-1]))
			c.maxGap = max(c.maxGap, at[i].Sub(at[i-1]))
		}
		first, last = earliest(first, at[0]), latest(last, at[len(at)-1])
		a := arrivals[host]
		slices.SortFunc(a, func(x, y time.Time) int { return x.Compare(y) })
		for i := 1; i < len(a); i++ {
			c.minArrival = min(c.minArrival, a[i].Sub(a[i-1]))
		}
	}
	limit := float64(webHosts) / (1.25 * webPace.Seconds())
	c.ratio = float64(c.requests) / last.Sub(first).Seconds() / limit
	return c
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// runFleet starts the fleet on a new redis-server and a new web whose
// pages answer after latency, kills process 0 (SIGKILL) after kill when
// kill is not 0, waits for the others to end, and returns the crawl and
// each process's pages.
func runFleet(b *testing.B, latency, kill time.Duration) (crawl, []int) {
	addr := startRedis(b)
	w := startWeb(b, latency)
	args := []string{"-redis", addr, "-status", "", "-delay", webPace.String(), "-workers", strconv.Itoa(webWork),
		"-max-pages", "100000"}
	var kids []*child
	for i := range webProcs {
		seeds := slices.Clone(w.seeds)
		if i%2 == 1 {
			slices.Reverse(seeds)
		}
		kids = append(kids, startChild(b, append(slices.Clone(args), seeds...)))
	}
	if kill > 0 {
		time.Sleep(kill)
		kids[0].cmd.Process.Signal(syscall.SIGKILL)
	}
	for _, k := range kids {
		<-k.done
		k.cmd.Wait()
	}
	var shares []int
	for _, k := range kids {
		shares = append(shares, k.pages())
	}
	return w.judge(), shares
}

// BenchmarkFleet measures README's fleet: 3 processes of 4 workers
// crawling 12 hosts at a 300ms pace from the same seeds, in opposite
// orders. It reports the requests a second over the politeness limit, the
// least share of the pages a process fetched, the least gap between two
// requests to a host, and pages fetched twice or never.
func BenchmarkFleet(b *testing.B) {
	for range b.N {
		c, shares := runFleet(b, 0, 0)
		report(b, c, shares)
	}
}

// BenchmarkFleetKill is BenchmarkFleet with one process killed (SIGKILL)
// 5s into the crawl, and pages that answer after 100ms, so that the dead
// process likely has turns out, and requests in flight: every page must
// still be fetched, none closer to the last at its host than the pace,
// and no more twice than the dead process's workers. max-gap-s is the
// longest a host waited, for a turn or a slot of the dead process to run
// out: 10s.
func BenchmarkFleetKill(b *testing.B) {
	for range b.N {
		c, shares := runFleet(b, 100*time.Millisecond, 5*time.Second)
		report(b, c, shares)
		b.ReportMetric(float64(shares[0]), "killed-pages")
		b.ReportMetric(c.maxGap.Seconds(), "max-gap-s")
	}
}

// report reports a crawl's figures, and fails b when a page was missed,
// fetched more than a killed process's workers allow, a private page was
// fetched, or a gap came under the pace.
func report(b *testing.B, c crawl, shares []int) {
	total := 0
	for _, s := range shares {
		total += s
	}
	least := 1.0
	for _, s := range shares {
		least = min(least, float64(s)/float64(max(total, 1)))
	}
	b.ReportMetric(c.ratio, "of-limit")
	b.ReportMetric(least, "least-share")
	b.ReportMetric(float64(c.minGap.Microseconds())/1000, "min-gap-ms")
	b.ReportMetric(float64(c.minArrival.Microseconds())/1000, "min-arrival-gap-ms")
	b.ReportMetric(float64(c.dups), "dups")
	b.ReportMetric(float64(c.missing), "missing")
	b.Logf("pages %d (per process %v), requests %d, %.3f of the limit, least share %.2f, least gap between starts %v (arrivals %v), most %v, fetched twice %d, never %d, private %d",
		c.pages, shares, c.requests, c.ratio, least, c.minGap, c.minArrival, c.maxGap, c.dups, c.missing, c.private)
	if c.missing > 0 || c.private > 0 || c.dups > webWork || c.minGap < webPace {
		b.Errorf("missing %d, private %d, twice %d (at most %d), least gap %v (at least %v)", c.missing, c.private, c.dups, webWork, c.minGap, webPace)
	}
}
