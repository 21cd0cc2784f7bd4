package main

import (
	"container/heap"
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

	// Due holds the hosts with queued URLs and no request under way: the
	// hosts that wait in the frontier for their turn.
	Due map[string]bool
}

// A crawler fetches pages through a polite http.Client and follows their
// links. It knows nothing of robots.txt, Crawl-delay or backoff: the
// transport enforces them. It keeps one request per host in flight at a
// time, and, when the transport can say when a host is ready (its Ready
// method), hands its workers only hosts that are ready now, so that they
// spread over the hosts instead of waiting in the transport for one.
type crawler struct {
	opts   crawlOptions
	client *http.Client
	ready  func(*http.Request) (polite.Readiness, error) // nil: every host is ready
	keyOf  func(*url.URL) string                         // the transport's pacing key, or hostKey
	emit   func(pageRecord)                              // called once per record, one at a time

	emitMu sync.Mutex // serialises emit

	mu        sync.Mutex // guards the fields below
	wake      *sync.Cond // signalled when work may be taken or the crawl ends
	seen      map[string]bool
	hosts     map[string]*hostQueue // frontier by pacing key
	due       dueHeap               // hosts with queued URLs and no request under way
	seq       uint64                // stamps hosts as they are put in due, to break ties in order
	alarm     *time.Timer           // wakes a worker at alarmAt; nil until first needed
	alarmAt   time.Time             // when alarm fires; zero when it is not set
	seedHosts map[string]bool       // url.Host of every seed, lower-cased, for sameHost
	claimed   int                   // requests sent or under way, against maxPages
	lastNew   time.Time             // when a new URL was last queued
	idle      bool                  // the crawl stopped on the idle timeout
	counts    crawlCounts
}

// A hostQueue is the frontier of one host. It is in the crawler's due heap
// when it has queued URLs and no request under way.
type hostQueue struct {
	key   string // pacing key
	items []crawlItem
	busy  bool      // a request is under way
	at    time.Time // not ready before this, as the transport last said; zero: ask it
	seq   uint64    // when it was last put in the heap or moved in it
	index int       // in the heap, or -1
}

type crawlItem struct {
	url   string
	host  string
	depth int
	tries int
}

// busyPoll is how long a host that the transport reports busy, though the
// crawler has no request under way to it, waits before it is asked again:
// a request of someone else's, sharing the transport, holds it.
const busyPoll = 50 * time.Millisecond

// newCrawler returns a crawler that sends its requests through rt. emit
// receives each record as it is made. If rt has a Ready method, as
// [polite.PoliteTransport] has, the crawler takes only hosts that it
// reports ready; otherwise every host with no request under way is ready.
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
		hosts:     make(map[string]*hostQueue),
		seedHosts: make(map[string]bool),
		keyOf:     hostKey,
	}
	if k, ok := rt.(interface{ PacingKey(*url.URL) string }); ok {
		c.keyOf = k.PacingKey // the frontier's hosts are the transport's
	}
	if r, ok := rt.(interface {
		Ready(*http.Request) (polite.Readiness, error)
	}); ok {
		c.ready = r.Ready
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
			c.enqueueLocked(crawlItem{url: s, host: c.keyOf(u)})
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
	if c.alarm != nil {
		c.alarm.Stop()
	}
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

// take waits for an item whose host is ready, and claims both. It returns
// false when the crawl is over: ctx ended, or nothing is queued or under way
// that could still produce work.
//
// Waiting workers are woken one at a time: by a request that finished, by
// the alarm set for when the next host is due, or by a worker that took an
// item while another host was due already, which passes the signal on.
func (c *crawler) take(ctx context.Context) (crawlItem, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		if ctx.Err() != nil {
			return crawlItem{}, false
		}
		now := time.Now()
		it, ok, next := c.pickLocked(ctx, now)
		switch {
		case next.IsZero():
		case next.After(now):
			c.setAlarmLocked(next)
		default:
			c.wake.Signal() // another host is due now
		}
		if ok {
			return it, true
		}
		if next.IsZero() && c.counts.Busy == 0 {
			c.wake.Broadcast() // the other workers find the same and stop
			return crawlItem{}, false
		}
		c.wake.Wait()
	}
}

// pickLocked pops the next item of a host that is ready now, unless maxPages
// requests are claimed already. Hosts are looked at in the order they become
// due, and the transport is asked about each: one that is not ready yet
// becomes due at the time it gives, or after busyPoll if it is busy. next is
// when the first host left in the frontier is due, or zero if there is none
// or no request may be sent.
func (c *crawler) pickLocked(ctx context.Context, now time.Time) (it crawlItem, ok bool, next time.Time) {
	if c.opts.maxPages > 0 && c.claimed >= c.opts.maxPages {
		return crawlItem{}, false, time.Time{}
	}
	for len(c.due) > 0 && !ok {
		h := c.due[0]
		if h.at.After(now) {
			break
		}
		if at := c.readyAt(ctx, h.items[0], now); at.After(now) {
			h.at = at
			c.seq++
			h.seq = c.seq
			heap.Fix(&c.due, 0)
			continue
		}
		heap.Pop(&c.due)
		it, ok = h.items[0], true
		h.items = h.items[1:]
		h.busy = true
		h.at = time.Time{}
		c.claimed++
		c.counts.Queued--
		c.counts.Busy++
	}
	if len(c.due) > 0 {
		next = c.due[0].at
		if next.IsZero() {
			next = now // known to no one yet: due at once
		}
	}
	return it, ok, next
}

// readyAt returns when the transport says a request for it could start:
// now or earlier if it is ready, now+busyPoll if the host is busy. A host
// whose robots.txt is not known is ready by its pace alone: the request
// fetches robots.txt first. A URL the transport cannot judge is ready, and
// its request fails on its own.
func (c *crawler) readyAt(ctx context.Context, it crawlItem, now time.Time) time.Time {
	if c.ready == nil {
		return time.Time{}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, it.url, nil)
	if err != nil {
		return time.Time{}
	}
	r, err := c.ready(req)
	switch {
	case err != nil:
		return time.Time{}
	case r.Busy:
		return now.Add(busyPoll)
	}
	return r.At
}

// setAlarmLocked makes sure a worker wakes at t, when a host becomes due.
func (c *crawler) setAlarmLocked(t time.Time) {
	if !c.alarmAt.IsZero() && !c.alarmAt.After(t) {
		return // an alarm goes off by then
	}
	c.alarmAt = t
	d := time.Until(t)
	if c.alarm == nil {
		c.alarm = time.AfterFunc(d, c.ring)
		return
	}
	c.alarm.Reset(d)
}

// ring wakes a worker when the alarm goes off.
func (c *crawler) ring() {
	c.mu.Lock()
	c.alarmAt = time.Time{}
	c.wake.Signal()
	c.mu.Unlock()
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
		h := c.hosts[it.host]
		h.items = append(h.items, it)
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
			c.enqueueLocked(crawlItem{url: l, host: c.keyOf(u), depth: it.depth + 1})
		}
	}
	c.queueLocked(c.hosts[it.host])
	c.wake.Signal()
	c.mu.Unlock()

	c.emitMu.Lock()
	c.emit(rec)
	c.emitMu.Unlock()
}

// release frees the host of it after a fetch cut short by the end of the
// crawl, and puts it back at the head of its host's queue, as a URL still
// to crawl.
func (c *crawler) release(it crawlItem) {
	c.mu.Lock()
	c.freeLocked(it)
	h := c.hosts[it.host]
	h.items = append([]crawlItem{it}, h.items...)
	c.counts.Queued++
	c.wake.Broadcast()
	c.mu.Unlock()
}

func (c *crawler) freeLocked(it crawlItem) {
	c.hosts[it.host].busy = false
	c.counts.Busy--
}

// queueLocked puts h in the due heap if it has queued URLs and no request
// under way, and is not there already.
func (c *crawler) queueLocked(h *hostQueue) {
	if h.index >= 0 || h.busy || len(h.items) == 0 {
		return
	}
	c.seq++
	h.seq = c.seq
	heap.Push(&c.due, h)
}

// enqueueLocked adds it to the frontier unless its URL was seen before.
func (c *crawler) enqueueLocked(it crawlItem) {
	if c.seen[it.url] {
		return
	}
	c.seen[it.url] = true
	h := c.hosts[it.host]
	if h == nil {
		h = &hostQueue{key: it.host, index: -1}
		c.hosts[it.host] = h
	}
	h.items = append(h.items, it)
	c.queueLocked(h)
	c.counts.Queued++
	c.lastNew = time.Now()
}

// dueHeap orders hosts by when they are due to be looked at, and those due
// at the same time by when they entered the heap.
type dueHeap []*hostQueue

func (q dueHeap) Len() int { return len(q) }

func (q dueHeap) Less(i, j int) bool {
	if !q[i].at.Equal(q[j].at) {
		return q[i].at.Before(q[j].at)
	}
	return q[i].seq < q[j].seq
}

func (q dueHeap) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index = i
	q[j].index = j
}

func (q *dueHeap) Push(x any) {
	h := x.(*hostQueue)
	h.index = len(*q)
	*q = append(*q, h)
}

func (q *dueHeap) Pop() any {
	old := *q
	h := old[len(old)-1]
	old[len(old)-1] = nil
	h.index = -1
	*q = old[:len(old)-1]
	return h
}

// progress returns the crawler's counts now.
func (c *crawler) progress() crawlCounts {
	c.mu.Lock()
	defer c.mu.Unlock()
	counts := c.counts
	counts.Due = make(map[string]bool, len(c.due))
	for _, h := range c.due {
		counts.Due[h.key] = true
	}
	return counts
}
