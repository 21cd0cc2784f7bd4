// Politefleet is a crawler that runs as one process of a fleet: start it
// on N machines with the same Redis, and together they crawl one web
// politely, as one crawler would. Every request goes through a
// [github.com/polite-go/polite.PoliteTransport] whose pacing
// ([github.com/polite-go/polite/redis.NewPacer]) and robots.txt
// ([github.com/polite-go/polite/redis.NewRobotsStore]) live in Redis, and
// the fleet shares its frontier there too: a process that finds a link
// claims it in a Redis set, and only the process that claimed a page
// fetches it.
//
// Usage:
//
//	politefleet -redis ADDR[,ADDR...] [-ua UA] [-delay D] [-workers N] [-max-pages N]
//	            [-status ADDR] [-prefix P] URL...
//
// -redis names one server, or the nodes of a Cluster when it names more
// than one. The fleet crawls the hosts of its seed URLs, following links
// from page to page on those hosts, until the fleet has claimed
// -max-pages pages (1000 by default) and this process has fetched those
// it claimed. -delay is the base delay between two starts at a host, for
// the whole fleet (1s by default). -workers requests may run at once in
// this process (8 by default). Every process of a fleet must use the same
// -redis, -prefix, -delay and -ua, and the same seeds.
//
// Each process prints one line per page on standard output (its status
// and URL) and serves its status page on -status (":9101" by default;
// "" for none): the fleet's pages claimed, this process's counts, and the
// pacing state of each host this process used, read from Redis, and so
// the same in every process: requests started by the whole fleet, the
// pace, the backoff level, the pause, requests in flight.
//
//	watch -n1 curl -s localhost:9101
//
// A seed's robots.txt disallowing a page stops every process from
// fetching it. When Redis is unreachable, each process paces its hosts
// in its own memory and fetches robots.txt itself, and says so on
// standard error, until Redis answers; its frontier is its own meanwhile.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/pace"
	politeredis "github.com/polite-go/polite/redis"
	"github.com/redis/go-redis/v9"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// config is what the flags say.
type config struct {
	addrs    []string
	ua       string
	delay    time.Duration
	workers  int
	maxPages int64
	status   string
	prefix   string
	seeds    []*url.URL
}

func parse(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("politefleet", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	addrs := fs.String("redis", "", "Redis address, or a Cluster's addresses separated by commas")
	fs.StringVar(&c.ua, "ua", "politefleet/1.0 (+https://github.com/polite-go/polite)", "User-Agent")
	fs.DurationVar(&c.delay, "delay", time.Second, "base delay between two starts at a host, for the fleet")
	fs.IntVar(&c.workers, "workers", 8, "requests at once in this process")
	fs.Int64Var(&c.maxPages, "max-pages", 1000, "pages the fleet claims at most")
	fs.StringVar(&c.status, "status", ":9101", `address of the status page; "" for none`)
	fs.StringVar(&c.prefix, "prefix", "politefleet", "prefix of the fleet's Redis keys")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if *addrs == "" || fs.NArg() == 0 || c.workers < 1 || c.delay < 0 {
		fs.Usage()
		return c, errors.New("politefleet: -redis and a seed URL are needed; -workers must be positive, -delay not negative")
	}
	c.addrs = strings.Split(*addrs, ",")
	for _, s := range fs.Args() {
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return c, fmt.Errorf("politefleet: %q is not an absolute http or https URL", s)
		}
		c.seeds = append(c.seeds, u)
	}
	return c, nil
}

// run runs one process of the fleet and returns its exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, err := parse(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, err)
		}
		return 2
	}
	client := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: c.addrs, ContextTimeoutEnabled: true})
	defer client.Close()
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	tr := polite.New(nil,
		polite.WithUserAgent(c.ua),
		polite.WithPacing(pace.Policy{BaseDelay: c.delay}),
		polite.WithPacer(politeredis.NewPacer(client, politeredis.WithKeyPrefix(c.prefix), politeredis.WithLogger(logger))),
		polite.WithRobotsStore(politeredis.NewRobotsStore(client, politeredis.WithKeyPrefix(c.prefix), politeredis.WithLogger(logger))),
		polite.WithLogger(logger))
	f := &fleet{c: c, client: client, http: &http.Client{Transport: tr, Timeout: time.Minute}, tr: tr, out: stdout,
		hosts: make(map[string]bool), work: make(chan *url.URL, 1<<16)}
	for _, u := range c.seeds {
		f.hosts[u.Host] = true
	}
	if c.status != "" {
		srv := &http.Server{Addr: c.status, Handler: http.HandlerFunc(f.serveStatus)}
		go srv.ListenAndServe()
		defer srv.Close()
	}
	for _, u := range c.seeds {
		f.claim(ctx, u)
	}
	var wg sync.WaitGroup
	for range c.workers {
		wg.Go(func() { f.worker(ctx) })
	}
	wg.Wait()
	fmt.Fprintf(stderr, "politefleet: fetched %d pages, %d failed, %d refused by robots.txt\n",
		f.fetched.Load(), f.failed.Load(), f.refused.Load())
	return 0
}

// A fleet is this process's part of the fleet's crawl.
type fleet struct {
	c      config
	client redis.UniversalClient
	http   *http.Client
	tr     *polite.PoliteTransport
	out    io.Writer
	outMu  sync.Mutex
	hosts  map[string]bool // the seeds' hosts: the fleet's web

	work                     chan *url.URL // the pages this process claimed and has not fetched
	pending                  atomic.Int64  // pages claimed and not yet done
	fetched, failed, refused atomic.Int64
}

// seen is the Redis set of the pages the fleet claimed.
func (f *fleet) seen() string { return f.c.prefix + ":seen" }

// claim claims u for this process, unless the fleet has it or has claimed
// enough pages; a claimed page joins this process's work.
func (f *fleet) claim(ctx context.Context, u *url.URL) {
	if n, err := f.client.SCard(ctx, f.seen()).Result(); err == nil && n >= f.c.maxPages {
		return
	}
	added, err := f.client.SAdd(ctx, f.seen(), u.String()).Result()
	if err != nil || added == 0 {
		return // another process has it, or Redis is down and it is lost to this crawl
	}
	f.pending.Add(1)
	select {
	case f.work <- u:
	default:
		f.pending.Add(-1) // the queue is full: the page stays claimed and unfetched
	}
}

// worker fetches claimed pages until none is left, or ctx ends.
func (f *fleet) worker(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case u := <-f.work:
			f.fetch(ctx, u)
			f.pending.Add(-1)
		case <-time.After(100 * time.Millisecond):
			if f.pending.Load() == 0 {
				return
			}
		}
	}
}

var href = regexp.MustCompile(`(?i)href\s*=\s*["']([^"'#]+)`)

// fetch fetches u, prints its line, and claims the links it finds.
func (f *fleet) fetch(ctx context.Context, u *url.URL) {
	req, _ := http.NewRequestWithContext(ctx, "GET", u.String(), nil)
	resp, err := f.http.Do(req)
	var status string
	var body []byte
	switch {
	case errors.Is(err, polite.ErrRobotsBlocked):
		f.refused.Add(1)
		status = "refused"
	case err != nil:
		f.failed.Add(1)
		status = "error"
	default:
		body, _ = io.ReadAll(io.LimitReader(resp.Body, 4<<20))
		resp.Body.Close()
		f.fetched.Add(1)
		status = fmt.Sprint(resp.StatusCode)
	}
	f.outMu.Lock()
	fmt.Fprintf(f.out, "%-7s %s\n", status, u)
	f.outMu.Unlock()
	for _, m := range href.FindAllSubmatch(body, -1) {
		next, err := u.Parse(string(m[1]))
		if err == nil && f.hosts[next.Host] && (next.Scheme == "http" || next.Scheme == "https") {
			next.Fragment = ""
			f.claim(ctx, next)
		}
	}
}

// serveStatus writes the status page.
func (f *fleet) serveStatus(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	claimed, _ := f.client.SCard(ctx, f.seen()).Result()
	fmt.Fprintf(w, "fleet: %d pages claimed of %d\nthis process: %d fetched, %d failed, %d refused, %d to fetch\n\n",
		claimed, f.c.maxPages, f.fetched.Load(), f.failed.Load(), f.refused.Load(), f.pending.Load())
	stats, err := f.tr.Stats(ctx)
	if err != nil {
		fmt.Fprintln(w, "stats:", err)
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "host\trequests (fleet)\tpace\tlevel\tpaused for\tin flight\trobots.txt refused")
	now := time.Now()
	for _, s := range stats {
		paused := "-"
		if s.PausedUntil.After(now) {
			paused = s.PausedUntil.Sub(now).Round(time.Second).String()
		}
		fmt.Fprintf(tw, "%s\t%d\t%v\t%d\t%s\t%d\t%d\n", s.Key, s.Requests, s.Pace, s.Level, paused, s.InFlight, s.Refused)
	}
	tw.Flush()
}
