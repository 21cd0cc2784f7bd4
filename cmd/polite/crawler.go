package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/polite-go/polite"
)

// maxBody bounds how much of a page the crawler reads for links.
const maxBody = 10 << 20

// crawlOptions are the crawler's limits.
type crawlOptions struct {
	maxPages    int           // requests to send, retries included; refusals by robots.txt do not count
	maxDepth    int           // links followed from a seed; 0 fetches the seeds only
	concurrency int           // workers; each works on one host at a time
	sameHost    bool          // follow only links to the seeds' hosts
	idleTimeout time.Duration // stop when no new link has been found for this long
	retries     int           // times a URL answered 429 or 5xx is queued again
}

// A pageRecord is one line of the crawl's output: one URL the crawler
// tried, whether or not it reached the network.
type pageRecord struct {
	URL     string    `json:"url"`
	Status  int       `json:"status"`            // 0 when there was no response
	Links   []string  `json:"links"`             // links found: anchors, canonical links, or a redirect's Location
	Depth   int       `json:"depth"`             // link distance from a seed
	Blocked string    `json:"blocked,omitempty"` // the robots.txt rule that refused the URL
	Error   string    `json:"error,omitempty"`   // why the request failed
	Host    string    `json:"-"`                 // pacing key
	At      time.Time `json:"-"`                 // when the answer or the refusal came
}

// crawlCounts is the crawler's progress.
type crawlCounts struct {
	Done    int // answers and errors
	Blocked int // refused by robots.txt
	Queued  int // waiting in the frontier
	Busy    int // being fetched or waiting in the transport
}

// A crawler fetches pages through a polite http.Client and follows their
// links. It knows nothing of robots.txt, Crawl-delay or backoff: the
// transport enforces them. It only keeps one request per host in flight at
// a time, so that its workers spread over the hosts instead of queueing in
// the transport behind one slow host.
type crawler struct {
	opts   crawlOptions
	client *http.Client
	emit   func(pageRecord) // called once per record, one at a time

	emitMu sync.Mutex // serialises emit

	mu        sync.Mutex // guards the fields below
	wake      *sync.Cond // signalled when work may be taken or the crawl ends
	seen      map[string]bool
	queues    map[string][]crawlItem // frontier by pacing key
	hosts     []string               // pacing keys in order of first sight, for round robin
	cursor    int                    // where the round robin resumes
	busy      map[string]bool        // hosts with a request under way
	seedHosts map[string]bool        // url.Host of every seed, lower-cased, for sameHost
	claimed   int                    // requests sent or under way, against maxPages
	lastNew   time.Time              // when a new URL was last queued
	idle      bool                   // the crawl stopped on the idle timeout
	counts    crawlCounts
}

type crawlItem struct {
	url   string
	host  string
	depth int
	tries int
}

// newCrawler returns a crawler that sends its requests through rt. emit
// receives each record as it is made.
func newCrawler(rt http.RoundTripper, opts crawlOptions, emit func(pageRecord)) *crawler {
	c := &crawler{
		opts: opts,
		client: &http.Client{
			Transport: rt,
			// A redirect is reported as a link, so that every record is one
			// request and the target goes through the frontier like any link.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		emit:      emit,
		seen:      make(map[string]bool),
		queues:    make(map[string][]crawlItem),
		busy:      make(map[string]bool),
		seedHosts: make(map[string]bool),
	}
	c.wake = sync.NewCond(&c.mu)
	return c
}

// run crawls from seeds until the frontier is empty, maxPages requests
// were sent, no new link was found for idleTimeout, or ctx ends. It
// reports whether it stopped on the idle timeout.
func (c *crawler) run(ctx context.Context, seeds []*url.URL) (idle bool) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, func() {
		c.mu.Lock()
		c.wake.Broadcast()
		c.mu.Unlock()
	})
	defer stop()

	c.mu.Lock()
	c.lastNew = time.Now()
	for _, u := range seeds {
		c.seedHosts[strings.ToLower(u.Host)] = true
		if s, ok := resolve(u, ""); ok {
			c.enqueueLocked(crawlItem{url: s, host: hostKey(u)})
		}
	}
	c.mu.Unlock()

	if c.opts.idleTimeout > 0 {
		go c.watchIdle(ctx, cancel)
	}
	var wg sync.WaitGroup
	for range max(c.opts.concurrency, 1) {
		wg.Go(func() { c.work(ctx) })
	}
	wg.Wait()

	c.mu.Lock()
	defer c.mu.Unlock()
	return c.idle
}

// watchIdle cancels the crawl once no new URL has been queued for the idle
// timeout.
func (c *crawler) watchIdle(ctx context.Context, cancel context.CancelFunc) {
	t := time.NewTimer(c.opts.idleTimeout)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		c.mu.Lock()
		left := c.opts.idleTimeout - time.Since(c.lastNew)
		if left <= 0 {
			c.idle = true
		}
		c.mu.Unlock()
		if left <= 0 {
			cancel()
			return
		}
		t.Reset(left)
	}
}

// work takes URLs from the frontier and fetches them until there is nothing
// left to do.
func (c *crawler) work(ctx context.Context) {
	for {
		it, ok := c.take(ctx)
		if !ok {
			return
		}
		rec := c.fetch(ctx, it)
		if ctx.Err() != nil {
			c.release(it)
			return // stopped: the answer, if any, is not reported
		}
		c.finish(it, rec)
	}
}

// take waits for an item whose host is free, and claims both. It returns
// false when the crawl is over: ctx ended, or nothing is queued or under way
// that could still produce work.
func (c *crawler) take(ctx context.Context) (crawlItem, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		if ctx.Err() != nil {
			return crawlItem{}, false
		}
		if it, ok := c.pickLocked(); ok {
			return it, true
		}
		if c.counts.Busy == 0 {
			c.wake.Broadcast() // the other workers find the same and stop
			return crawlItem{}, false
		}
		c.wake.Wait()
	}
}

// pickLocked pops the next item of the next free host, round robin, unless
// maxPages requests are claimed already.
func (c *crawler) pickLocked() (crawlItem, bool) {
	if c.opts.maxPages > 0 && c.claimed >= c.opts.maxPages {
		return crawlItem{}, false
	}
	for i := range c.hosts {
		j := (c.cursor + i) % len(c.hosts)
		h := c.hosts[j]
		q := c.queues[h]
		if c.busy[h] || len(q) == 0 {
			continue
		}
		it := q[0]
		c.queues[h] = q[1:]
		c.busy[h] = true
		c.cursor = j + 1
		c.claimed++
		c.counts.Queued--
		c.counts.Busy++
		return it, true
	}
	return crawlItem{}, false
}

// fetch makes the request for it and reads the links of the answer.
func (c *crawler) fetch(ctx context.Context, it crawlItem) (rec pageRecord) {
	rec = pageRecord{URL: it.url, Depth: it.depth, Host: it.host, Links: []string{}}
	defer func() { rec.At = time.Now() }()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, it.url, nil)
	if err != nil {
		rec.Error = err.Error()
		return rec
	}
	resp, err := c.client.Do(req)
	if err != nil {
		var blocked *polite.RobotsBlockedError
		if errors.As(err, &blocked) {
			rec.Blocked = robotsRule(blocked)
		} else {
			rec.Error = unwrapURLError(err).Error()
		}
		return rec
	}
	defer resp.Body.Close()
	rec.Status = resp.StatusCode
	body := io.LimitReader(resp.Body, maxBody)
	switch {
	case 300 <= resp.StatusCode && resp.StatusCode < 400:
		if loc := resp.Header.Get("Location"); loc != "" {
			if u, ok := resolve(resp.Request.URL, loc); ok {
				rec.Links = append(rec.Links, u)
			}
		}
	case resp.StatusCode < 300 && isHTML(resp.Header.Get("Content-Type")):
		rec.Links = extractLinks(body, resp.Request.URL)
	}
	io.Copy(io.Discard, body) // the rest, so the connection can be reused
	return rec
}

// finish records the outcome of it: frees its host, queues its links, or
// itself again for a retry, and emits its record.
func (c *crawler) finish(it crawlItem, rec pageRecord) {
	c.mu.Lock()
	c.freeLocked(it)
	switch {
	case rec.Blocked != "":
		c.claimed-- // nothing was sent
		c.counts.Blocked++
	case backoffStatus(rec.Status) && it.tries < c.opts.retries:
		// The transport has backed the host off; the retry waits for it.
		it.tries++
		c.queues[it.host] = append(c.queues[it.host], it)
		c.counts.Queued++
		c.counts.Done++
	default:
		c.counts.Done++
	}
	if it.depth < c.opts.maxDepth {
		for _, l := range rec.Links {
			u, err := url.Parse(l)
			if err != nil || c.opts.sameHost && !c.seedHosts[u.Host] {
				continue
			}
			c.enqueueLocked(crawlItem{url: l, host: hostKey(u), depth: it.depth + 1})
		}
	}
	c.wake.Broadcast()
	c.mu.Unlock()

	c.emitMu.Lock()
	c.emit(rec)
	c.emitMu.Unlock()
}

// release frees the host of it after a fetch cut short by the end of the crawl.
func (c *crawler) release(it crawlItem) {
	c.mu.Lock()
	c.freeLocked(it)
	c.wake.Broadcast()
	c.mu.Unlock()
}

func (c *crawler) freeLocked(it crawlItem) {
	c.busy[it.host] = false
	c.counts.Busy--
}

// enqueueLocked adds it to the frontier unless its URL was seen before.
func (c *crawler) enqueueLocked(it crawlItem) {
	if c.seen[it.url] {
		return
	}
	c.seen[it.url] = true
	if _, ok := c.queues[it.host]; !ok {
		c.hosts = append(c.hosts, it.host)
	}
	c.queues[it.host] = append(c.queues[it.host], it)
	c.counts.Queued++
	c.lastNew = time.Now()
}

// progress returns the crawler's counts now.
func (c *crawler) progress() crawlCounts {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts
}
