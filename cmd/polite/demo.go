package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"sort"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/cmd/polite/internal/human"
	"github.com/polite-go/polite/pace"
)

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("demo", stderr, nil)
	fast := fs.Bool("fast", false, "shrink the delays the demo controls, for tests")
	timeline := fs.String("timeline", "", "write an SVG timeline of request starts per host to `FILE`")
	verbose := fs.Bool("v", false, "print every request and refusal as it happened")
	serve := fs.Bool("serve", false, "serve the demo web until interrupted, and crawl nothing")
	port := fs.Int("port", 0, "the demo web's port; 0 for any free one")
	if status := parseFlags(fs, args); status >= 0 {
		return status
	}
	if fs.NArg() > 0 {
		return usageError(fs, "unexpected arguments: %v", fs.Args())
	}
	if *port < 0 || *port > 65535 {
		return valueError(fs, "-port must be between 0 and 65535")
	}
	t := demoDefault
	if *fast {
		t = demoFast
	}
	if *serve {
		return serveDemo(ctx, t, *port, stdout, stderr)
	}
	return demo(ctx, demoConfig{timing: t, port: *port, timeline: *timeline, verbose: *verbose}, stdout, stderr)
}

// serveDemo serves the demo web until ctx ends.
func serveDemo(ctx context.Context, t demoTiming, port int, stdout, stderr io.Writer) int {
	web, err := startDemoWeb(t, port, false)
	if err != nil {
		fmt.Fprintf(stderr, "polite demo: %v\n", err)
		return exitError
	}
	defer web.Close()
	fmt.Fprintln(stdout, "polite demo: serving the demo web until interrupted")
	for _, s := range web.order {
		fmt.Fprintf(stdout, "  %-24s %-6s %s\n", web.url(s)+"/", s.name, s.about)
	}
	if web.virtual {
		fmt.Fprintln(stdout, "  (this system has no 127.0.0.2 or 127.0.0.3: only 127.0.0.1 is served)")
	}
	<-ctx.Done()
	return exitOK
}

// demoConfig is one run of the demo.
type demoConfig struct {
	timing   demoTiming
	port     int    // the demo web's port, or 0 for any
	virtual  bool   // serve the three sites on one listener, as where 127.0.0.2 cannot be bound
	timeline string // SVG file to write, or ""
	verbose  bool
}

// demoCrawl are the crawler's settings for the demo: every reachable page,
// with a worker for each host.
var demoCrawl = crawlOptions{
	maxPages:    200,
	maxDepth:    10,
	concurrency: 3,
	sameHost:    true,
	idleTimeout: 30 * time.Second,
	retries:     1,
}

// demo runs the demo. When ctx ends, it stops the crawl, writes the table
// and the timeline of what was crawled, and returns exitInterrupted
// without a verdict.
func demo(ctx context.Context, cfg demoConfig, stdout, stderr io.Writer) int {
	t := cfg.timing
	web, err := startDemoWeb(t, cfg.port, cfg.virtual)
	if err != nil {
		fmt.Fprintf(stderr, "polite demo: %v\n", err)
		return exitError
	}
	defer web.Close()

	fmt.Fprintf(stdout, "polite demo: a web of three hosts on loopback, crawled as %q\n\n", defaultUA)
	for _, s := range web.order {
		fmt.Fprintf(stdout, "  %-24s %-6s %s\n", web.url(s), s.name, s.about)
	}
	if web.virtual {
		fmt.Fprintf(stdout, "  (all three are served on 127.0.0.1:%s: this system has no 127.0.0.2 or 127.0.0.3)\n", web.port)
	}
	fmt.Fprintf(stdout, "\ntransport: base delay %s, jitter %.1f, one request per host at a time, and a robots.txt\n", t.baseDelay, defaultPacing.Jitter)
	fmt.Fprintf(stdout, "           TTL of %s instead of 24h, so that flaky's recovery is seen within the run\n", t.robotsTTL)
	fmt.Fprintf(stdout, "           (a failed fetch is kept for min(TTL, 5m) before it is tried again)\n")
	fmt.Fprintf(stdout, "crawler:   %d workers, one host each at a time; a URL answered 429 or 5xx is tried once more\n\n", demoCrawl.concurrency)

	wire := &wireRecorder{base: web.transport()}
	tr := polite.New(wire,
		polite.WithRobotsTransport(wire), // it adds nothing: robots.txt redirects to other hosts are followed
		polite.WithUserAgent(defaultUA),
		polite.WithPacing(pace.Policy{BaseDelay: t.baseDelay}),
		polite.WithRobotsTTL(t.robotsTTL),
	)
	defer tr.CloseIdleConnections()
	var seeds []*url.URL
	for _, s := range web.order {
		u, err := url.Parse(web.url(s) + "/")
		if err != nil {
			panic(err) // the demo's own URLs
		}
		seeds = append(seeds, u)
	}
	fmt.Fprintf(stdout, "crawling %d seeds...\n", len(seeds))
	res := crawl(ctx, tr, wire, demoCrawl, seeds, stderr, func(pageRecord) {})
	if cfg.verbose {
		writeWireLog(stdout, res)
	}

	floor := paceFloor{base: t.baseDelay, maxCrawlDelay: defaultPacing.MaxCrawlDelay}
	reports := buildReport(res.wire, res.stats, floor)
	robotsFetches := 0
	for _, r := range res.wire {
		if r.Robots {
			robotsFetches++
		}
	}
	fmt.Fprintf(stdout, "\ncrawled in %s: %d page requests and %d robots.txt fetches went on the wire; %d URLs were refused by robots.txt\n\n",
		res.end.Sub(res.start).Round(10*time.Millisecond), len(res.wire)-robotsFetches, robotsFetches, res.blocked())
	writeTable(stdout, reports)
	fmt.Fprintln(stdout)

	interrupted := ctx.Err() != nil
	ok := false
	if !interrupted {
		arrivals, retryAfters := web.serverLog()
		verdict := judge(evidence{
			sites:       web.order,
			siteOf:      siteFinder(web.order),
			arrivals:    arrivals,
			retryAfters: retryAfters,
			records:     res.records,
			wire:        res.wire,
			floor:       demoFloor(t.baseDelay, siteFinder(web.order)),
			slow:        t.slow,
		})
		ok = writeVerdict(stdout, verdict)
	}

	if cfg.timeline != "" {
		d := res.timeline()
		d.Title = "polite demo: request starts per host"
		d.Labels = make(map[string]string)
		for _, s := range web.order {
			d.Labels[s.ip] = s.ip + " " + s.name
		}
		if err := writeTimelineFile(cfg.timeline, d); err != nil {
			fmt.Fprintf(stderr, "polite demo: %v\n", err)
			return exitError
		}
		fmt.Fprintf(stdout, "\ntimeline written to %s\n", cfg.timeline)
	}
	if interrupted {
		fmt.Fprintln(stdout, "polite demo: interrupted, so no verdict")
		return exitInterrupted
	}
	if !ok {
		fmt.Fprintln(stdout, "\npolite demo: the verdict FAILS")
		return exitBlocked
	}
	fmt.Fprintln(stdout, "\npolite demo: the crawl was polite")
	return exitOK
}

// writeWireLog prints every request on the wire and every refusal, in
// order of time.
func writeWireLog(w io.Writer, res crawlResult) {
	type line struct {
		at   time.Time
		text string
	}
	var lines []line
	for _, r := range res.wire {
		what := fmt.Sprint(r.Status)
		if r.Err != "" {
			what = r.Err
		}
		if r.RetryAfter > 0 {
			what += fmt.Sprintf(" Retry-After %s", r.RetryAfter)
		}
		lines = append(lines, line{r.Start, fmt.Sprintf("%-10s GET %s → %s (%s)", r.Host, pathOf(r.URL), what, human.Duration(r.Latency()))})
	}
	for _, rec := range res.records {
		if rec.Blocked != "" {
			lines = append(lines, line{rec.At, fmt.Sprintf("%-10s refused %s (%s)", rec.Host, pathOf(rec.URL), rec.Blocked)})
		}
	}
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].at.Before(lines[j].at) })
	fmt.Fprintln(w)
	for _, l := range lines {
		fmt.Fprintf(w, "  %+8.3fs  %s\n", l.at.Sub(res.start).Seconds(), l.text)
	}
}

// demoFloor returns the least gap the policy allows before a request, from
// what the demo itself set rather than what the transport read: the base
// delay, and the site's Crawl-delay for its pages. (A robots.txt fetch may
// come sooner after a failed one; the demo holds it to the base delay.)
func demoFloor(base time.Duration, siteOf func(string) *demoSite) func(wireRequest) time.Duration {
	return func(r wireRequest) time.Duration {
		if s := siteOf(r.Host); s != nil && !r.Robots {
			return max(base, s.crawlDelay)
		}
		return base
	}
}
