// Politefleet is a crawler that runs as one process of a fleet: start it
// on N machines with the same Redis, and together they crawl one web
// politely, as one crawler would. Every request goes through a
// [github.com/polite-go/polite.PoliteTransport] whose pacing
// ([github.com/polite-go/polite/redis.NewPacer]) and robots.txt
// ([github.com/polite-go/polite/redis.NewRobotsStore]) live in Redis, and
// so does the fleet's frontier
// ([github.com/polite-go/polite/redis.NewFrontier]): each process adds the
// links it finds to it, and takes from it the next URL of a host that can
// start, whichever process found it, so that every process fetches a
// share. A process that dies leaves its URLs to the others: each comes
// back once its lease runs out (10s), and its hosts' slots too.
//
// Usage:
//
//	politefleet -redis ADDR[,ADDR...] [-ua UA] [-delay D] [-workers N] [-max-pages N]
//	            [-status ADDR] [-prefix P] URL...
//
// -redis names one server, or the nodes of a Cluster when it names more
// than one. The fleet crawls the hosts of its seed URLs, following links
// from page to page on those hosts, until the fleet has added -max-pages
// pages (1000 by default) and fetched them all; a process that starts
// later, or again, joins the crawl under way. -delay is the base delay
// between two starts at a host, for the whole fleet (1s by default).
// -workers requests may run at once in this process (8 by default). Every
// process of a fleet must use the same -redis, -prefix, -delay and -ua,
// and the same seeds.
//
// Each process prints one line per page on standard output (its status
// and URL) and serves its status page on -status (":9101" by default;
// "" for none): the fleet's frontier, read from Redis and so the same in
// every process (URLs queued, leased and done, overall and per host, and
// those handed out again after a process died), this process's counts,
// and the pacing state of each host this process used: requests started
// by the whole fleet, the pace, the backoff level, the pause, requests in
// flight.
//
//	watch -n1 curl -s localhost:9101
//
// A seed's robots.txt disallowing a page stops every process from
// fetching it. When Redis is unreachable, each process waits for it to
// answer, and says so on standard error; a page whose links could not be
// added is fetched again later, so that no link is lost.
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
	"github.com/polite-go/polite/frontier"
	"github.com/polite-go/polite/pace"
	politeredis "github.com/polite-go/polite/redis"
	"github.com/redis/go-redis/v9"
)

// baseTransport is the transport that polite sends through; nil for its
// default. The fleet benchmarks set it, to stamp each request's start.
var baseTransport http.RoundTripper

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
	fs.Int64Var(&c.maxPages, "max-pages", 1000, "pages the fleet adds at most")
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
	prefix, warn := politeredis.WithKeyPrefix(c.prefix), politeredis.WithLogger(logger)
	tr := polite.New(baseTransport,
		polite.WithUserAgent(c.ua),
		polite.WithPacing(pace.Policy{BaseDelay: c.delay}),
		polite.WithPacer(politeredis.NewPacer(client, prefix, warn)),
		polite.WithRobotsStore(politeredis.NewRobotsStore(client, prefix, warn)),
		polite.WithLogger(logger))
	fl := &fleet{c: c, http: &http.Client{Transport: tr, Timeout: time.Minute}, tr: tr, out: stdout,
		hosts: make(map[string]bool)}
	fl.f = politeredis.NewFrontier(client, tr, frontier.Options{Dedup: true, Refused: fl.refusedURL}, prefix, warn)
	defer fl.f.Close()
	for _, u := range c.seeds {
		fl.hosts[u.Host] = true
	}
	if c.status != "" {
		srv := &http.Server{Addr: c.status, Handler: http.HandlerFunc(fl.serveStatus)}
		go srv.ListenAndServe()
		defer srv.Close()
	}
	fl.refreshAdded(ctx)
	for _, u := range c.seeds {
		fl.add(ctx, u.String())
	}
	var wg sync.WaitGroup
	for range c.workers {
		wg.Go(func() { fl.worker(ctx) })
	}
	wg.Wait()
	fmt.Fprintf(stderr, "politefleet: fetched %d pages, %d failed, %d refused by robots.txt\n",
		fl.fetched.Load(), fl.failed.Load(), fl.refused.Load())
	return 0
}

// A fleet is this process's part of the fleet's crawl.
type fleet struct {
	c     config
	f     *politeredis.Frontier
	http  *http.Client
	tr    *polite.PoliteTransport
	hosts map[string]bool // the seeds' hosts: the fleet's web

	outMu sync.Mutex // guards out
	out   io.Writer

	added                    atomic.Int64 // pages the fleet added, as this process last read it, and its own adds since
	addedAt                  atomic.Int64 // when added was last read, ns since the epoch
	fetched, failed, refused atomic.Int64
}

// print prints a page's line.
func (fl *fleet) print(status, rawURL string) {
	fl.outMu.Lock()
	defer fl.outMu.Unlock()
	fmt.Fprintf(fl.out, "%-7s %s\n", status, rawURL)
}

// refusedURL is the frontier's Refused hook: robots.txt refused the URL,
// which no worker fetches.
func (fl *fleet) refusedURL(rawURL string, _ polite.Decision) {
	fl.refused.Add(1)
	fl.print("refused", rawURL)
}

// addedEvery is how often a process reads how many pages the fleet
// added, for -max-pages.
const addedEvery = 100 * time.Millisecond

// refreshAdded reads how many pages the fleet added, at most every
// addedEvery.
func (fl *fleet) refreshAdded(ctx context.Context) {
	if time.Since(time.Unix(0, fl.addedAt.Load())) < addedEvery {
		return
	}
	fl.addedAt.Store(time.Now().UnixNano())
	if s, err := fl.f.Stats(ctx, 0); err == nil {
		fl.added.Store(s.Added)
	}
}

// add adds rawURL to the fleet's frontier, unless the fleet has added
// -max-pages pages, as this process last read it a tenth of a second ago,
// counting its own adds since. It reports false when Redis did not take
// the URL, which the caller must not lose.
func (fl *fleet) add(ctx context.Context, rawURL string) bool {
	fl.refreshAdded(ctx)
	if fl.added.Load() >= fl.c.maxPages {
		return true
	}
	queued, err := fl.f.Add(ctx, rawURL)
	if queued {
		fl.added.Add(1)
	}
	return err == nil || errors.Is(err, frontier.ErrFull) || errors.Is(err, frontier.ErrHostFull)
}

// worker fetches the pages the frontier hands it until the fleet has none
// left, or ctx ends.
func (fl *fleet) worker(ctx context.Context) {
	for {
		t, err := fl.f.Next(ctx)
		if err != nil {
			return // frontier.ErrEmpty: the crawl is over; or ctx ended
		}
		if fl.fetch(ctx, t.URL) {
			t.Done()
		} else {
			t.Requeue()
		}
	}
}

var href = regexp.MustCompile(`(?i)href\s*=\s*["']([^"'#]+)`)

// fetch fetches rawURL, prints its line, and adds the links it finds. It
// reports false when a link could not be added, for the page to be
// fetched again.
func (fl *fleet) fetch(ctx context.Context, rawURL string) bool {
	req, err := http.NewRequestWithContext(ctx, "GET", rawURL, nil)
	if err != nil {
		return true
	}
	resp, err := fl.http.Do(req)
	var status string
	var body []byte
	switch {
	case errors.Is(err, polite.ErrRobotsBlocked):
		fl.refused.Add(1)
		status = "refused"
	case err != nil:
		if ctx.Err() != nil {
			return false // stopped: the page is fetched by another process
		}
		fl.failed.Add(1)
		status = "error"
	default:
		body, _ = io.ReadAll(io.LimitReader(resp.Body, 4<<20))
		resp.Body.Close()
		fl.fetched.Add(1)
		status = fmt.Sprint(resp.StatusCode)
	}
	fl.print(status, rawURL)
	ok := true
	for _, m := range href.FindAllSubmatch(body, -1) {
		next, err := req.URL.Parse(string(m[1]))
		if err == nil && fl.hosts[next.Host] && (next.Scheme == "http" || next.Scheme == "https") {
			next.Fragment = ""
			ok = fl.add(ctx, next.String()) && ok
		}
	}
	return ok
}

// serveStatus writes the status page.
func (fl *fleet) serveStatus(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	s, err := fl.f.Stats(ctx, 1000)
	if err != nil {
		fmt.Fprintln(w, "frontier:", err)
		return
	}
	fmt.Fprintf(w, "fleet: %d pages added of %d; %d queued, %d leased, %d done, %d refused by robots.txt, %d handed out again after a process died\n",
		s.Added, fl.c.maxPages, s.Queued, s.Leased, s.Done, s.Refused, s.Redelivered)
	fmt.Fprintf(w, "this process: %d fetched, %d failed, %d refused\n\n", fl.fetched.Load(), fl.failed.Load(), fl.refused.Load())
	pacing := map[string]polite.HostStats{}
	if stats, err := fl.tr.Stats(ctx); err == nil {
		for _, h := range stats {
			pacing[h.Key] = h
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "host\tqueued\tleased\tdone\trefused\trequests (fleet)\tpace\tlevel\tpaused for\tin flight")
	now := time.Now()
	for _, h := range s.ByHost {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d", h.Key, h.Queued, h.Leased, h.Done, h.Refused)
		p, ok := pacing[h.Key]
		if !ok {
			fmt.Fprintln(tw, "\t-\t-\t-\t-\t-")
			continue
		}
		paused := "-"
		if p.PausedUntil.After(now) {
			paused = p.PausedUntil.Sub(now).Round(time.Second).String()
		}
		fmt.Fprintf(tw, "\t%d\t%v\t%d\t%s\t%d\n", p.Requests, p.Pace, p.Level, paused, p.InFlight)
	}
	tw.Flush()
}
