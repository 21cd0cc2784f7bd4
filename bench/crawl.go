package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/polite-go/polite"
	politecolly "github.com/polite-go/polite/colly"
	"github.com/polite-go/polite/frontier"
	"github.com/polite-go/polite/pace"
)

// crawlLimit crawls the same web of the local site with four crawlers, in
// turn, round after round, and reports how close each comes to the
// politeness limit from its first request to its last: a frontier-driven
// crawler (package frontier over PoliteTransport), a plain pool of
// workers calling http.Client.Do over PoliteTransport on URLs from a FIFO
// queue, gocolly/colly v2 with Async and a LimitRule per host, and colly
// fed from a frontier (politecolly.Crawl). The web has -hosts hosts of
// -pages pages each, every page linking to two more of its host and to
// one of each of two other hosts; the crawl starts from every host's first
// page and follows every link. With -paused, that many hosts answer every
// page 429 with Retry-After: 3600, and the limit is the other hosts'; the
// requests sent to them, robots.txt fetches included, are counted apart.
func crawlLimit(args []string) error {
	fs := flag.NewFlagSet("crawl", flag.ExitOnError)
	hosts := fs.Int("hosts", 100, "hosts of the web")
	pages := fs.Int("pages", 30, "pages per host")
	delay := fs.Duration("delay", 200*time.Millisecond, "base delay per host; the jitter is polite's default, 0.5")
	workers := fs.Int("workers", 16, "workers of the crawlers that have a pool")
	paused := fs.String("paused", "0,10", "numbers of hosts paused, one case each, separated by commas")
	rounds := fs.Int("rounds", 3, "crawls by each crawler, per case")
	fs.Parse(args)

	s, err := startSite()
	if err != nil {
		return err
	}
	defer s.close()
	jitter := pace.Policy{}.Effective().Jitter
	meanPace := time.Duration(float64(*delay) * (1 + jitter/2))
	fmt.Printf("crawl: %d hosts × %d pages, delay %v and jitter %.1f (mean pace %v), %d workers\n",
		*hosts, *pages, *delay, jitter, meanPace, *workers)

	for _, f := range strings.Split(*paused, ",") {
		nPaused, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || nPaused < 0 || nPaused >= *hosts {
			return fmt.Errorf("-paused: %q is not a number of hosts", f)
		}
		cfg := siteConfig{Robots: map[string]string{"": "User-agent: *\nDisallow: /private/\n"},
			WebPages: *pages, WebHosts: *hosts, TooMany: map[string]int{}, RetryAfter: 3600}
		for h := range nPaused {
			cfg.TooMany[fmt.Sprintf("h%d.test", h)] = 1 << 30
		}
		limit := float64(*hosts-nPaused) / meanPace.Seconds()
		fmt.Printf("%d hosts paused: the limit of the %d others is %.0f requests/s\n", nPaused, *hosts-nPaused, limit)
		cs := crawlCase{s: s, hosts: *hosts, paused: nPaused, delay: *delay, workers: *workers}
		ratios := make([][]float64, len(crawlers))
		rates := make([][]float64, len(crawlers))
		cpus := make([][]float64, len(crawlers))
		toPaused := make([][]float64, len(crawlers))
		for round := range *rounds {
			fmt.Printf("  round %d:", round+1)
			for i := range crawlers {
				who := (i + round) % len(crawlers)
				if err := s.configure(cfg); err != nil {
					return err
				}
				r, err := cs.run(crawlers[who].run)
				if err != nil {
					return fmt.Errorf("%s: %v", crawlers[who].name, err)
				}
				ratios[who] = append(ratios[who], r.rate()/limit)
				rates[who] = append(rates[who], r.rate())
				cpus[who] = append(cpus[who], r.cpuPerRequest())
				toPaused[who] = append(toPaused[who], float64(r.toPaused))
			}
			for who, c := range crawlers {
				fmt.Printf(" %s %.3f;", c.name, ratios[who][round])
			}
			fmt.Println()
		}
		fmt.Printf("  median of %d rounds:            limit-ratio   req/s  CPU/request  to paused hosts\n", *rounds)
		for who, c := range crawlers {
			fmt.Printf("    %-28s %10.3f %7.0f %9.0fµs %16.0f\n", c.name, median(ratios[who]), median(rates[who]), median(cpus[who]), median(toPaused[who]))
		}
	}
	return nil
}

// crawlCase is one web to crawl and how.
type crawlCase struct {
	s       *site
	hosts   int
	paused  int // h0.test to h<paused-1>.test
	delay   time.Duration
	workers int
}

// crawlRun is what one crawl did.
type crawlRun struct {
	requests int           // to healthy hosts, robots.txt fetches included
	toPaused int           // to paused hosts, robots.txt fetches included
	span     time.Duration // from the first of them to the last
	cpu      time.Duration // the process's CPU time over the crawl
}

func (r crawlRun) rate() float64          { return float64(r.requests) / r.span.Seconds() }
func (r crawlRun) cpuPerRequest() float64 { return float64(r.cpu.Microseconds()) / float64(r.requests) }

// crawlers are the contestants. Each crawls from seeds through base until
// it has nothing left to do or ctx ends.
var crawlers = []struct {
	name string
	run  func(ctx context.Context, cs crawlCase, base http.RoundTripper, seeds []string) error
}{
	{"frontier", crawlFrontier},
	{"worker pool", crawlPool},
	{"colly Async+LimitRule", crawlColly},
	{"politecolly.Crawl", crawlPoliteColly},
}

// idleAfter is how long a crawl may go without starting a request before
// it is stopped: a crawler with only paused hosts left waits for them.
const idleAfter = 2 * time.Second

// run crawls cs's web with crawl and measures it on the wire.
func (cs crawlCase) run(crawl func(context.Context, crawlCase, http.RoundTripper, []string) error) (crawlRun, error) {
	rec := &wireLog{base: cs.s.transport()}
	defer rec.base.CloseIdleConnections()
	seeds := make([]string, cs.hosts)
	for h := range seeds {
		seeds[h] = fmt.Sprintf("http://h%d.test/p/0", h)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go rec.cancelWhenIdle(ctx, cancel)
	cpu0 := cpuTime()
	err := crawl(ctx, cs, rec, seeds)
	cpu := cpuTime() - cpu0
	if err != nil && !errors.Is(err, context.Canceled) {
		return crawlRun{}, err
	}
	r := crawlRun{cpu: cpu}
	var first, last time.Time
	for _, st := range rec.starts() {
		h, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(st.host, "h"), ".test"))
		if h < cs.paused {
			r.toPaused++
			continue
		}
		if first.IsZero() {
			first = st.at
		}
		last = st.at
		r.requests++
	}
	r.span = last.Sub(first)
	if r.requests < 2 {
		return crawlRun{}, fmt.Errorf("%d requests to healthy hosts", r.requests)
	}
	return r, nil
}

// politeTransport is the transport of the crawlers over polite: crawl's
// pacing, with a base delay of cs.delay and the default jitter.
func (cs crawlCase) politeTransport(base http.RoundTripper) *polite.PoliteTransport {
	return polite.New(base, polite.WithUserAgent("BenchBot/1.0"),
		polite.WithPacing(pace.Policy{BaseDelay: cs.delay}),
		polite.WithLimits(polite.Limits{MaxKeys: 2*cs.hosts + 10, MaxOrigins: 2*cs.hosts + 10}))
}

// hrefs matches the links of the site's pages.
var hrefs = regexp.MustCompile(`href="([^"]+)"`)

// getLinks fetches u through c and returns the links of the page.
func getLinks(c *http.Client, u string) []string {
	resp, err := c.Get(u)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var links []string
	for _, m := range hrefs.FindAllSubmatch(body, -1) {
		links = append(links, string(m[1]))
	}
	return links
}

// crawlFrontier is a crawler built on package frontier: cs.workers workers
// take URLs whose hosts are ready.
func crawlFrontier(ctx context.Context, cs crawlCase, base http.RoundTripper, seeds []string) error {
	tr := cs.politeTransport(base)
	f := frontier.New(tr, frontier.Options{Seen: new(frontier.SeenSet).Seen})
	for _, u := range seeds {
		f.Add(ctx, u)
	}
	client := &http.Client{Transport: tr}
	var wg sync.WaitGroup
	for range cs.workers {
		wg.Go(func() {
			for {
				t, err := f.Next(ctx)
				if err != nil {
					return
				}
				for _, l := range getLinks(client, t.URL) {
					f.Add(ctx, l)
				}
				t.Done()
			}
		})
	}
	wg.Wait()
	return nil
}

// crawlPool is the plain pool of workers a new user writes: cs.workers
// goroutines calling Do on URLs from a FIFO queue, over PoliteTransport.
// The client's Timeout of 30 s makes a request to a paused host fail at
// once (polite knows it cannot start in time) rather than hold its worker
// for an hour.
func crawlPool(ctx context.Context, cs crawlCase, base http.RoundTripper, seeds []string) error {
	client := &http.Client{Transport: cs.politeTransport(base), Timeout: 30 * time.Second}
	q := &fifo{seen: make(map[string]bool)}
	q.wake = sync.NewCond(&q.mu)
	q.push(seeds)
	stop := context.AfterFunc(ctx, func() {
		q.mu.Lock()
		q.stopped = true
		q.wake.Broadcast()
		q.mu.Unlock()
	})
	defer stop()
	var wg sync.WaitGroup
	for range cs.workers {
		wg.Go(func() {
			for {
				u, ok := q.pop()
				if !ok {
					return
				}
				q.push(getLinks(client, u))
				q.done()
			}
		})
	}
	wg.Wait()
	return nil
}

// fifo is the pool's queue: URLs first in first out, each once.
type fifo struct {
	mu      sync.Mutex // guards the fields below
	wake    *sync.Cond // signalled when a URL is queued, or the crawl may be over
	urls    []string
	seen    map[string]bool
	active  int  // URLs popped and not done
	stopped bool // the crawl's context ended
}

func (q *fifo) push(urls []string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, u := range urls {
		if !q.seen[u] {
			q.seen[u] = true
			q.urls = append(q.urls, u)
			q.wake.Signal()
		}
	}
}

// pop waits for a URL; false when the crawl is over.
func (q *fifo) pop() (string, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.urls) == 0 && q.active > 0 && !q.stopped {
		q.wake.Wait()
	}
	if len(q.urls) == 0 || q.stopped {
		q.wake.Broadcast()
		return "", false
	}
	u := q.urls[0]
	q.urls = q.urls[1:]
	q.active++
	return u, true
}

func (q *fifo) done() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.active--
	q.wake.Broadcast()
}

// crawlColly is gocolly/colly v2 as its documentation has it for a
// polite concurrent crawl: Async, its own robots.txt handling, and a
// LimitRule per host with Parallelism 1, Delay cs.delay and a RandomDelay
// of half of it, whose mean matches polite's jitter.
func crawlColly(ctx context.Context, cs crawlCase, base http.RoundTripper, seeds []string) error {
	c := colly.NewCollector(colly.Async(true), colly.UserAgent("BenchBot/1.0"), colly.StdlibContext(ctx))
	c.IgnoreRobotsTxt = false
	c.WithTransport(base)
	for h := range cs.hosts {
		if err := c.Limit(&colly.LimitRule{DomainGlob: fmt.Sprintf("h%d.test", h), Parallelism: 1, Delay: cs.delay, RandomDelay: cs.delay / 2}); err != nil {
			return err
		}
	}
	c.OnHTML("a[href]", func(e *colly.HTMLElement) { e.Request.Visit(e.Attr("href")) })
	for _, u := range seeds {
		c.Visit(u)
	}
	c.Wait()
	return nil
}

// crawlPoliteColly is colly as politecolly.NewCollector sets it, fed from
// a frontier by politecolly.Crawl with cs.workers workers.
func crawlPoliteColly(ctx context.Context, cs crawlCase, base http.RoundTripper, seeds []string) error {
	c, tr := politecolly.NewCollector("BenchBot/1.0", politecolly.Options{Base: base, Timeout: 30 * time.Second,
		Polite: []polite.Option{polite.WithPacing(pace.Policy{BaseDelay: cs.delay}),
			polite.WithLimits(polite.Limits{MaxKeys: 2*cs.hosts + 10, MaxOrigins: 2*cs.hosts + 10})}})
	f := frontier.New(tr, frontier.Options{Seen: new(frontier.SeenSet).Seen})
	c.OnHTML("a[href]", func(e *colly.HTMLElement) { f.Add(ctx, e.Request.AbsoluteURL(e.Attr("href"))) })
	for _, u := range seeds {
		f.Add(ctx, u)
	}
	return politecolly.Crawl(ctx, c, f, cs.workers)
}

// wireLog is a base transport that notes when each request starts, and to
// which host.
type wireLog struct {
	base *http.Transport

	mu   sync.Mutex // guards log and last
	log  []wireStart
	last time.Time // the latest start, or when the crawl began
}

type wireStart struct {
	host string
	at   time.Time
}

func (w *wireLog) RoundTrip(req *http.Request) (*http.Response, error) {
	now := time.Now()
	w.mu.Lock()
	w.log = append(w.log, wireStart{host: req.URL.Hostname(), at: now})
	w.last = now
	w.mu.Unlock()
	return w.base.RoundTrip(req)
}

func (w *wireLog) starts() []wireStart {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.log)
}

// cancelWhenIdle calls cancel once no request has started for idleAfter.
func (w *wireLog) cancelWhenIdle(ctx context.Context, cancel context.CancelFunc) {
	w.mu.Lock()
	w.last = time.Now()
	w.mu.Unlock()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		w.mu.Lock()
		idle := time.Since(w.last)
		w.mu.Unlock()
		if idle >= idleAfter {
			cancel()
			return
		}
	}
}
