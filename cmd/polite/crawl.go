package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/cmd/polite/internal/human"
)

func runCrawl(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var c commonFlags
	fs := newFlagSet("crawl", stderr, &c)
	var opts crawlOptions
	fs.IntVar(&opts.maxPages, "max-pages", 100, "stop after this many requests (refusals by robots.txt do not count)")
	fs.IntVar(&opts.maxDepth, "max-depth", 3, "follow links this many steps from the URLs given")
	fs.IntVar(&opts.concurrency, "concurrency", 4, "hosts crawled at once, each when the transport reports it ready: one request in flight per host")
	fs.BoolVar(&opts.sameHost, "same-host", false, "follow only links to the hosts of the URLs given")
	opts.idleTimeout = 30 * time.Second
	fs.Var((*durationValue)(&opts.idleTimeout), "idle-timeout", "stop when no request has started or ended for this `duration`; 0 for none")
	fs.IntVar(&opts.retries, "retries", 1, "queue a URL again this many times after a 429 or 5xx")
	fs.BoolVar(&opts.sitemaps, "sitemaps", false, "seed the crawl also with the pages that each seed origin's sitemaps list: those its robots.txt names, or /sitemap.xml when it names none")
	timeline := fs.String("timeline", "", "write an SVG timeline of request starts per host to `FILE`")
	if status := parseFlags(fs, args); status >= 0 {
		return status
	}
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.ResponseHeaderTimeout = 30 * time.Second
	wire := &wireRecorder{base: base}
	tr, err := newTransport(wire, c.options())
	if err != nil {
		return valueError(fs, "%v", err)
	}
	switch {
	case opts.maxPages < 1:
		return valueError(fs, "-max-pages must be at least 1")
	case opts.maxDepth < 0:
		return valueError(fs, "-max-depth must not be negative")
	case opts.concurrency < 1:
		return valueError(fs, "-concurrency must be at least 1")
	case opts.idleTimeout < 0:
		return valueError(fs, "-idle-timeout must not be negative")
	case opts.retries < 0:
		return valueError(fs, "-retries must not be negative")
	}
	rawURLs, err := urlArgs(fs)
	if err != nil {
		return usageError(fs, "%v", err)
	}
	seeds, err := parseURLs(rawURLs)
	if err != nil {
		return valueError(fs, "%v", err)
	}

	floor := paceFloor{base: c.delay, maxCrawlDelay: defaultPacing.MaxCrawlDelay}

	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	var encErr error
	res := crawl(ctx, tr, wire, opts, seeds, stderr, func(r pageRecord) {
		if err := enc.Encode(r); err != nil && encErr == nil {
			encErr = err
		}
	})
	if encErr != nil {
		fmt.Fprintf(stderr, "polite crawl: writing output: %v\n", encErr)
		return exitError
	}

	fmt.Fprintln(stderr)
	writeTable(stderr, buildReport(res.wire, res.stats, floor))
	fmt.Fprintf(stderr, "\n%d requests, %d refused by robots.txt", len(res.wire), res.blocked())
	if opts.sitemaps {
		fmt.Fprintf(stderr, ", %d sitemaps read (%d failed) listing %d URLs", res.sitemaps.sitemaps, res.sitemaps.failed, res.sitemaps.urls)
	}
	if n := res.failed(); n > 0 {
		fmt.Fprintf(stderr, ", %d failed", n)
	}
	fmt.Fprintf(stderr, ", in %s", human.Duration(res.end.Sub(res.start)))
	if res.idle {
		fmt.Fprintf(stderr, "; stopped when no request had started or ended for %s", opts.idleTimeout)
	}
	fmt.Fprintln(stderr)
	if *timeline != "" {
		if err := writeTimelineFile(*timeline, res.timeline()); err != nil {
			fmt.Fprintf(stderr, "polite crawl: %v\n", err)
			return exitError
		}
	}
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "polite crawl: interrupted; URLs still to crawl: %d\n", res.left)
		return exitInterrupted
	}
	status := res.status()
	if status != exitOK {
		fmt.Fprintln(stderr, "polite crawl: no URL given could be fetched")
	}
	return status
}

// crawlResult is what a crawl leaves behind.
type crawlResult struct {
	start, end time.Time
	records    []pageRecord // in the order they were made
	wire       []wireRequest
	stats      []polite.HostStats
	idle       bool // stopped on the idle timeout
	left       int  // URLs queued, or under way when the crawl stopped
	sitemaps   sitemapCounts
}

// blocked counts the records refused by robots.txt.
func (r crawlResult) blocked() int {
	n := 0
	for _, rec := range r.records {
		if rec.Blocked != "" {
			n++
		}
	}
	return n
}

// failed counts the records of requests that got no response.
func (r crawlResult) failed() int {
	n := 0
	for _, rec := range r.records {
		if rec.Error != "" {
			n++
		}
	}
	return n
}

// status returns the crawl's exit status: exitOK when it fetched a seed, a
// URL it was given, whatever the answer and whatever came after it.
// Otherwise, by the seeds' records: exitBlocked when robots.txt refused
// them, and exitError when a request for one failed, or the crawl stopped
// before any ended.
func (r crawlResult) status() int {
	refused, failed := false, false
	for _, rec := range r.records {
		switch {
		case rec.Depth > 0 || rec.Sitemap:
		case rec.Status != 0:
			return exitOK
		case rec.Blocked != "":
			refused = true
		default:
			failed = true
		}
	}
	if refused && !failed {
		return exitBlocked
	}
	return exitError
}

// crawl crawls from seeds through tr, whose base is wire, passing each
// record to emit. While progress is a terminal, it keeps a progress line
// there.
func crawl(ctx context.Context, tr *polite.PoliteTransport, wire *wireRecorder, opts crawlOptions,
	seeds []*url.URL, progress io.Writer, emit func(pageRecord)) crawlResult {
	res := crawlResult{start: time.Now()}
	c := newCrawler(tr, opts, func(r pageRecord) {
		res.records = append(res.records, r) // emit is called one record at a time
		emit(r)
	})
	c.report = progress
	line := startProgress(progress, func(now time.Time) string {
		stats, _ := tr.Stats(ctx) // the in-memory pacer's fail only when ctx has ended
		return crawlProgress(c.progress(stats), stats, now)
	})
	res.idle = c.run(ctx, seeds)
	res.left = c.frontier.Len() // a fetch cut short was requeued
	res.sitemaps = c.sitemapsOf // the walks have ended
	line.Stop()
	res.end = time.Now()
	res.wire = wire.requests()
	res.stats, _ = tr.Stats(context.Background()) // the in-memory pacer's never fail
	res.countRefusals()
	return res
}

// countRefusals sets each host's Refused to the records robots.txt
// refused: those the frontier dropped before they were handed out, which
// the transport decided by Check and did not count, and those the
// transport refused itself.
func (r crawlResult) countRefusals() {
	refused := make(map[string]uint64)
	for _, rec := range r.records {
		if rec.Blocked != "" {
			refused[rec.Host]++
		}
	}
	for i := range r.stats {
		r.stats[i].Refused = refused[r.stats[i].Key]
	}
}

// timeline returns the data of the crawl's SVG timeline.
func (r crawlResult) timeline() timelineData {
	d := timelineData{Start: r.start, End: r.end, Wire: r.wire}
	for _, s := range r.stats {
		d.Hosts = append(d.Hosts, s.Key)
	}
	for _, rec := range r.records {
		if rec.Blocked != "" {
			d.Refusals = append(d.Refusals, refusal{Host: rec.Host, URL: rec.URL, At: rec.At, Rule: rec.Blocked})
		}
	}
	return d
}

// writeTimelineFile writes the SVG timeline of d to the file name.
func writeTimelineFile(name string, d timelineData) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := writeTimeline(f, d); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
