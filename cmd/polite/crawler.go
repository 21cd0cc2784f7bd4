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
	"github.com/polite-go/polite/cmd/polite/internal/backoff"
	"github.com/polite-go/polite/frontier"
)

// maxBody bounds how much of a page the crawler reads for links.
const maxBody = 10 << 20

// crawlOptions are the crawler's limits.
type crawlOptions struct {
	maxPages    int           // requests to send, retries included; refusals by robots.txt do not count
	maxDepth    int           // links followed from a seed; 0 fetches the seeds only
	concurrency int           // workers; each works on one host at a time
	sameHost    bool          // follow only links to the seeds' hosts
	idleTimeout time.Duration // stop when no request has started or ended for this long
	retries     int           // times a URL answered 429 or 5xx is queued again
	sitemaps    bool          // seed also with the pages the seeds' origins' sitemaps list
}

// A pageRecord is one line of the crawl's output: one URL the crawler
// tried, whether or not it reached the network.
type pageRecord struct {
	URL     string    `json:"url"`
	Status  int       `json:"status"`            // 0 when there was no response
	Links   []string  `json:"links"`             // links found: anchors, canonical links, or a redirect's Location
	Depth   int       `json:"depth"`             // link distance from a seed
	Sitemap bool      `json:"sitemap,omitempty"` // a sitemap listed the URL: a seed no one gave
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

	// Due holds the hosts with queued URLs: the hosts that wait in the
	// frontier for their turn.
	Due map[string]bool
}

// A crawler fetches pages through a polite http.Client and follows their
// links. It knows nothing of robots.txt, Crawl-delay or backoff: the
// transport enforces them. Its frontier (package frontier) hands its
// workers only URLs whose hosts the transport reports ready, one per host
// at a time, so that they spread over the hosts instead of waiting in the
// transport for one, and drops the URLs robots.txt refuses before they
// take a worker's turn.
type crawler struct {
	opts     crawlOptions
	client   *http.Client
	frontier *frontier.Frontier
	keyOf    func(*url.URL) string // the transport's pacing key, or hostKey
	emit     func(pageRecord)      // called once per record, one at a time
	report   io.Writer             // hears of the sitemaps that could not be read
	walks    sync.WaitGroup        // the sitemap walks under way

	emitMu sync.Mutex // serialises emit, and guards closed
	closed bool       // the crawl is over: records that come later are dropped

	mu        sync.Mutex     // guards the fields below
	depth     map[string]int // every URL queued, with its link distance from a seed
	tries     map[string]int // times a URL was queued again after a 429 or 5xx
	seedHosts map[string]bool
	claimed   int       // requests sent or under way, against maxPages
	lastBusy  time.Time // when a request last started or ended: the idle timeout counts from it
	idle      bool      // the crawl stopped on the idle timeout
	counts    crawlCounts
	pending   int        // URLs added to the frontier whose last record has not been made
	exhausted bool       // the frontier was found empty: nothing queued, and nothing out
	settled   *sync.Cond // on mu: pending went down

	fromSitemap map[string]bool // the URLs queued because a sitemap listed them
	sitemapsOf  sitemapCounts   // what the sitemap walks did
	walking     int             // sitemap walks under way
	walkGen     uint64          // counts the URLs the walks queued and the walks that ended
	changed     *sync.Cond      // on mu: walkGen went up, the frontier gave out a URL, or the crawl's context ended
}

// sitemapCounts is what the sitemap walks of a crawl did.
type sitemapCounts struct {
	sitemaps, failed, urls int
}

// A crawlItem is a URL a worker fetches: its frontier turn, and what the
// crawler knows of it.
type crawlItem struct {
	turn    frontier.Turn
	url     string
	host    string
	depth   int
	sitemap bool // a sitemap listed it
}

// newCrawler returns a crawler that sends its requests through rt. emit
// receives each record as it is made. If rt has Ready, Check and
// PacingKey methods, as [polite.PoliteTransport] has, the frontier asks
// it when each host is ready and what robots.txt allows; otherwise every
// host with no request under way is ready, and rt decides.
func newCrawler(rt http.RoundTripper, opts crawlOptions, emit func(pageRecord)) *crawler {
	c := &crawler{
		opts: opts,
		client: &http.Client{
			Transport: rt,
			// A redirect is reported as a link, so that every record is one
			// request and the target goes through the frontier like any link.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		emit:        emit,
		report:      io.Discard,
		fromSitemap: make(map[string]bool),
		depth:       make(map[string]int),
		tries:       make(map[string]int),
		seedHosts:   make(map[string]bool),
	}
	ft, ok := rt.(frontier.Transport)
	if !ok {
		ft = unpaced{}
	}
	c.keyOf = ft.PacingKey
	c.settled = sync.NewCond(&c.mu)
	c.changed = sync.NewCond(&c.mu)
	c.frontier = frontier.New(ft, frontier.Options{Refused: c.refused})
	return c
}

// unpaced is the frontier's view of a transport that cannot say when a
// host is ready: every host is, and every URL allowed.
type unpaced struct{}

func (unpaced) Ready(*http.Request) (polite.Decision, error) {
	return polite.Decision{RobotsKnown: true}, nil
}

func (unpaced) Check(*http.Request) (polite.Decision, error) {
	return polite.Decision{Mode: polite.RobotsOff, Allowed: true}, nil
}

func (unpaced) PacingKey(u *url.URL) string { return hostKey(u) }

// run crawls from seeds until nothing is queued or under way, maxPages
// requests were sent, no request started or ended for idleTimeout, or ctx
// ends. It reports whether it stopped on the idle timeout.
func (c *crawler) run(ctx context.Context, seeds []*url.URL) (idle bool) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	c.mu.Lock()
	c.lastBusy = time.Now()
	for _, u := range seeds {
		c.seedHosts[strings.ToLower(u.Host)] = true
	}
	c.mu.Unlock()
	for _, u := range seeds {
		if s, ok := resolve(u, ""); ok {
			c.enqueue(ctx, s, 0)
		}
	}
	defer context.AfterFunc(ctx, func() {
		c.mu.Lock()
		c.changed.Broadcast()
		c.mu.Unlock()
	})()
	if c.opts.sitemaps {
		c.sitemapWalks(ctx, seeds, c.report)
	}

	if c.opts.idleTimeout > 0 {
		go c.watchIdle(ctx, cancel)
	}
	var wg sync.WaitGroup
	for range max(c.opts.concurrency, 1) {
		wg.Go(func() { c.work(ctx) })
	}
	wg.Wait()
	cancel() // the walks of sitemaps, when the workers stopped first
	c.walks.Wait()
	c.close()

	c.mu.Lock()
	defer c.mu.Unlock()
	return c.idle
}

// watchIdle cancels the crawl once no request has started or ended for
// the idle timeout: requests that hang, or hosts that the transport holds
// back for longer, such as by a Crawl-delay or a Retry-After longer than
// the timeout.
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
		left := c.opts.idleTimeout - time.Since(c.lastBusy)
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
			it.turn.Requeue()
			return // stopped: the answer, if any, is not reported
		}
		c.finish(ctx, it, rec)
	}
}

// take claims a request against maxPages and waits for the frontier to
// hand out a URL whose host is ready. It returns false when the crawl is
// over: maxPages requests are claimed, ctx ended, or nothing is queued or
// under way that could still produce work.
func (c *crawler) take(ctx context.Context) (crawlItem, bool) {
	c.mu.Lock()
	if c.opts.maxPages > 0 && c.claimed >= c.opts.maxPages {
		c.mu.Unlock()
		return crawlItem{}, false
	}
	c.claimed++
	c.mu.Unlock()

	for {
		c.mu.Lock()
		gen := c.walkGen
		c.mu.Unlock()
		t, err := c.frontier.Next(ctx)
		if errors.Is(err, frontier.ErrEmpty) && c.waitWalks(ctx, gen) {
			continue // a sitemap walk queued a URL, or ended
		}
		return c.took(t, err)
	}
}

// took counts what take's last call of Next returned.
func (c *crawler) took(t frontier.Turn, err error) (crawlItem, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.exhausted = c.exhausted || errors.Is(err, frontier.ErrEmpty)
		c.claimed--
		return crawlItem{}, false
	}
	c.counts.Busy++
	c.lastBusy = time.Now()
	c.changed.Broadcast()    // the frontier holds one URL fewer
	u, _ := url.Parse(t.URL) // the frontier took it
	return crawlItem{turn: t, url: t.URL, host: c.keyOf(u), depth: c.depth[t.URL], sitemap: c.fromSitemap[t.URL]}, true
}

// busy records that a request started or ended now, for the idle timeout.
func (c *crawler) busy() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lastBusy = time.Now()
}

// refused records a URL that robots.txt refused before it was handed out.
func (c *crawler) refused(rawURL string, d polite.Decision) {
	rule := d.Rule
	if rule == "" {
		rule = d.Reason
	}
	if rule == "" {
		rule = "robots.txt"
	}
	u, _ := url.Parse(rawURL) // the frontier took it
	c.mu.Lock()
	rec := pageRecord{URL: rawURL, Links: []string{}, Depth: c.depth[rawURL], Sitemap: c.fromSitemap[rawURL], Blocked: rule, Host: c.keyOf(u), At: time.Now()}
	c.counts.Blocked++
	c.mu.Unlock()
	c.emitRecord(rec)
	c.mu.Lock()
	c.pending--
	c.settled.Broadcast()
	c.mu.Unlock()
}

// fetch makes the request for it and reads the links of the answer.
func (c *crawler) fetch(ctx context.Context, it crawlItem) (rec pageRecord) {
	rec = pageRecord{URL: it.url, Depth: it.depth, Sitemap: it.sitemap, Host: it.host, Links: []string{}}
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

// finish records the outcome of it: queues its links, or itself again for
// a retry, ends its turn, and emits its record.
func (c *crawler) finish(ctx context.Context, it crawlItem, rec pageRecord) {
	if it.depth < c.opts.maxDepth {
		for _, l := range rec.Links {
			u, err := url.Parse(l)
			if err != nil || c.opts.sameHost && !c.isSeedHost(u.Host) {
				continue
			}
			c.enqueue(ctx, l, it.depth+1)
		}
	}
	c.mu.Lock()
	c.counts.Busy--
	c.lastBusy = time.Now()
	c.pending--
	retry := false
	switch {
	case rec.Blocked != "":
		c.claimed-- // nothing was sent
		c.counts.Blocked++
	case backoff.Status(rec.Status) && c.tries[it.url] < c.opts.retries:
		// The transport has backed the host off; the retry waits for it.
		c.tries[it.url]++
		c.pending++ // it is queued again
		retry = true
		c.counts.Done++
	default:
		c.counts.Done++
	}
	c.mu.Unlock()
	if retry {
		it.turn.Requeue()
	} else {
		it.turn.Done()
	}
	c.emitRecord(rec)
}

// emitRecord passes rec to emit, one record at a time, until the crawl is
// over.
func (c *crawler) emitRecord(rec pageRecord) {
	c.emitMu.Lock()
	defer c.emitMu.Unlock()
	if !c.closed {
		c.emit(rec)
	}
}

// close ends the records of a crawl whose workers have stopped. When they
// found the frontier empty, it first waits for the records of URLs that
// robots.txt refused on a goroutine of the frontier's, whose hook may be
// called after the frontier has said it is empty; a crawl stopped early
// leaves the URLs it did not end, and their late refusals are dropped.
func (c *crawler) close() {
	c.mu.Lock()
	for c.exhausted && c.pending > 0 {
		c.settled.Wait()
	}
	c.mu.Unlock()
	c.emitMu.Lock()
	c.closed = true
	c.emitMu.Unlock()
}

// isSeedHost reports whether host, as a URL writes it, is a seed's.
func (c *crawler) isSeedHost(host string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seedHosts[host]
}

// enqueue adds rawURL, found depth links from a seed, to the frontier
// unless it was queued before.
func (c *crawler) enqueue(ctx context.Context, rawURL string, depth int) {
	c.mu.Lock()
	if _, seen := c.depth[rawURL]; seen {
		c.mu.Unlock()
		return
	}
	c.depth[rawURL] = depth
	c.mu.Unlock()
	_, err := c.frontier.Add(ctx, rawURL)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		delete(c.depth, rawURL) // not queued: it may be found again
		return
	}
	c.pending++
}

// progress returns the crawler's counts now; a host of stats is due when
// the frontier holds URLs for it.
func (c *crawler) progress(stats []polite.HostStats) crawlCounts {
	c.mu.Lock()
	counts := c.counts
	c.mu.Unlock()
	counts.Queued = c.frontier.Len()
	counts.Due = make(map[string]bool)
	for _, h := range stats {
		if c.frontier.HostLen(h.Key) > 0 {
			counts.Due[h.Key] = true
		}
	}
	return counts
}
