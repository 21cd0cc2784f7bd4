// Package frontier hands a crawler's workers URLs whose hosts can take a
// request now, so that no worker waits inside a [polite.PoliteTransport]
// for one host's turn while other hosts are ready.
//
// The transport paces each host by waiting inside RoundTrip: the right
// shape for an SDK, and the wrong one for a pool of workers fed from a
// plain queue, whose workers sit in the transport on paused and slow hosts
// while the other hosts starve. A [Frontier] sits in front of the workers
// instead. It keeps the crawler's URLs in a queue per pacing key
// ([polite.PoliteTransport.PacingKey]), first in first out, and the hosts
// with queued URLs in a heap ordered by when the transport says each could
// take a request ([polite.PoliteTransport.Ready]). [Frontier.Next] hands a
// worker the next URL of a host that can start now, or waits until one
// can, within its context; the worker fetches it through the transport,
// adds the links it found with [Frontier.Add], and ends its [Turn] with
// Done, or with Requeue to have the URL handed out again. A host has at
// most one URL out at a time, from Next to the end of its turn:
//
//	f := frontier.New(tr, frontier.Options{Dedup: true})
//	f.Add(ctx, "https://example.com/")
//	for {
//		t, err := f.Next(ctx)
//		if err != nil {
//			break // ErrEmpty: nothing queued and nothing out; or ctx ended
//		}
//		if resp, err := client.Get(t.URL); err == nil { // starts at once: the host is ready
//			// ... f.Add the links of the page ...
//			resp.Body.Close()
//		}
//		t.Done()
//	}
//
// # When a host is ready
//
// A host is looked at when it comes to the top of the heap: when it is new,
// when the At the transport last gave for it has come, or after a turn of
// it has ended, which changes its state. The frontier then asks the
// transport's Ready about the host's next URL, once. A host that is ready
// (its At not after now, not busy) has its URL decided by robots.txt and
// handed out; one that is not goes back into the heap at its At; one that
// is busy with requests that are not the frontier's (another user of the
// transport, or of a [pace.Pacer] that a fleet shares) is asked again at
// its At, and no sooner than 50 ms. A host whose Ready fails is ready: the
// URL's request decides and waits for itself.
//
// Next costs O(log hosts) for the heap, and per URL handed out about two
// Ready calls (one after the host's last turn, one when its At comes) and
// one Check; with a Pacer that a fleet shares, each of them is one call to
// the Pacer's store (for Check, its [pace.ReadyPacer]'s Ready, which
// gives the Decision's Pace). Ready and Check run outside the frontier's
// lock, so that workers asking about different hosts do not wait for each
// other.
//
// With a Pacer that is not a [pace.ReadyPacer], Ready knows no pace, and
// every host with no URL out is ready: workers then wait in the transport,
// as they would without a frontier.
//
// # robots.txt
//
// A refused URL never takes a worker's turn. Before it hands a URL out, the
// frontier decides it by [polite.PoliteTransport.Check], when Ready says
// that its origin's robots.txt is known, so that Check fetches nothing. A
// URL that robots.txt refuses ([polite.RobotsEnforce] and not allowed) is
// passed to Options.Refused and dropped, and the host's next URL is looked
// at; in [polite.RobotsReport] mode it is handed out, and the transport
// sends it and reports it.
//
// A host whose robots.txt is not known is prefetched: the frontier calls
// Check for its first URL on a goroutine of its own, which fetches the
// file through the transport, paced like any request to the host, while
// the workers crawl the hosts that are ready; then the host goes back into
// the heap and is asked again, a pace after the fetch. At most
// Options.RobotsPrefetch fetches run at once; the other hosts wait for one
// to end, in the order they came. A prefetch outlives the Next call that
// started it: it ends with the fetch, which the transport's robots.txt
// timeout bounds. A host is prefetched at most once between two of its
// turns: when its robots.txt is still not known after that (the fetch
// failed, or the transport's robots.txt cache let it go), its URL is
// handed out, and the request fetches the file itself.
//
// # Memory
//
// The frontier holds at most Options.MaxURLs URLs, and at most
// Options.MaxHostURLs per host, counting the URLs queued, the URLs out,
// and the URLs being added. A URL is stored as its bytes past its host's
// origin and a byte or two of length, in one byte slice per host: no object
// of its own. A host costs a small struct, a map entry and a place in the
// heap, and is forgotten when it has no URL. The rule for overflow: [Add]
// refuses a URL that would pass either bound, with [ErrFull] or
// [ErrHostFull], and does not mark it seen, so that the crawler may add it
// again when it comes upon it later; the URLs already queued are kept.
//
// # Seen URLs
//
// A crawler finds the same links again and again. Options.Dedup queues
// each URL once: the frontier keeps a [SeenSet] of the URLs it queued.
// Options.Seen, when set, is asked about every URL that Add would queue,
// after the bounds and before queueing (and before Dedup's set), and a
// URL it reports seen is not queued: a hook of the crawler's own can keep
// the set anywhere. Without either, every URL added is queued. A URL that
// Next hands out again after Requeue is not asked about.
//
// # A fleet
//
// A [Frontier] serves the workers of one process. A fleet of processes
// that share hosts shares its frontier instead: the Frontier of package
// politeredis keeps the queues, the turns and the seen URLs in Redis,
// with this contract, and both are a [Queue], the seam a crawler is
// written against, so that it moves from one process to a fleet by the
// line that makes its frontier. politetest.RunQueue holds both to the
// same cases.
//
// A Frontier is safe for use by multiple goroutines. Its hooks are called
// outside its lock, and may be called from several goroutines at once.
package frontier

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/polite-go/polite"
)

// Transport is what a Frontier needs of the transport its workers fetch
// through: a [*polite.PoliteTransport] has it. Ready and Check are asked
// with a GET request with no header, so robots.txt is read for the
// transport's own User-Agent.
type Transport interface {
	// Ready reports when a request like req could start, reserving
	// nothing; see [polite.PoliteTransport.Ready].
	Ready(req *http.Request) (polite.Decision, error)
	// Check decides req by robots.txt without sending it; see
	// [polite.PoliteTransport.Check].
	Check(req *http.Request) (polite.Decision, error)
	// PacingKey returns the key that requests to u are paced by: a
	// Frontier queues URLs by it.
	PacingKey(u *url.URL) string
}

// Options configure a [Frontier]. The zero value is valid.
type Options struct {
	// MaxURLs bounds the URLs the frontier holds: queued, out, or being
	// added. 0 means 1,000,000.
	MaxURLs int
	// MaxHostURLs bounds the URLs it holds for one pacing key. 0 means
	// 100,000.
	MaxHostURLs int
	// Seen, if not nil, reports whether rawURL was seen before, and
	// records it as seen. Add queues only the URLs it reports unseen, and
	// returns its error.
	Seen func(ctx context.Context, rawURL string) (seen bool, err error)
	// Dedup, when set, queues each URL once: Add reports a URL it queued
	// before as not queued, whether or not it is still held. A Frontier
	// keeps a [SeenSet] for it, asked after Seen; a Queue that a fleet
	// shares keeps its own set beside its queues, so that no process can
	// mark a URL seen and die before queueing it.
	Dedup bool
	// Refused, if not nil, receives every URL that robots.txt refuses,
	// with the decision, before it is dropped.
	Refused func(rawURL string, d polite.Decision)
	// RobotsPrefetch is how many robots.txt fetches the frontier runs at
	// once, ahead of the URLs of hosts whose robots.txt is not known. 0
	// means 32; a negative value prefetches nothing, and hands such a
	// host's first URL out instead, whose request fetches the file.
	RobotsPrefetch int
}

// The defaults of Options.
const (
	defaultMaxURLs     = 1_000_000
	defaultMaxHostURLs = 100_000
	defaultPrefetch    = 32
)

// busyPoll is how soon a host that the transport reports busy, with
// requests that are not the frontier's, is asked again, at the earliest.
const busyPoll = 50 * time.Millisecond

// Errors that Add and Next return.
var (
	// ErrFull is returned by Add for a URL that would pass Options.MaxURLs.
	ErrFull = errors.New("frontier: full")
	// ErrHostFull is returned by Add for a URL that would pass
	// Options.MaxHostURLs for its pacing key.
	ErrHostFull = errors.New("frontier: the host's queue is full")
	// ErrEmpty is returned by Next when the frontier holds no URL, queued
	// or out, and none is being added: no turn can end and add more.
	ErrEmpty = errors.New("frontier: empty")
)

// A Frontier is a crawler's queue of URLs that hands its workers only
// URLs whose hosts can take a request now. See the package documentation.
type Frontier struct {
	t           Transport
	maxURLs     int
	maxHostURLs int
	seen        func(context.Context, string) (bool, error)
	refused     func(string, polite.Decision)
	prefetch    int
	epoch       time.Time // the frontier's clock starts here: times are nanoseconds since

	mu        sync.Mutex       // guards the fields below, and every host's
	hosts     map[string]*host // by pacing key: the hosts that hold URLs
	due       hostHeap         // the hosts with queued URLs and nothing under way
	seq       uint64           // numbers the hosts put into due, for their order
	held      int              // URLs counted against maxURLs
	queued    int              // URLs queued, not out
	busy      int              // hosts asked about, prefetched or out: they come back
	adding    int              // Add calls in the Seen hook
	fetching  int              // prefetch goroutines running
	fetchWait []*host          // hosts waiting for a prefetch goroutine, first come first
	waiters   []chan struct{}  // Next calls waiting, first come first; each is woken once
	alarm     *time.Timer      // wakes a waiter when the top of due comes; nil until needed
	alarmAt   int64            // when alarm fires; 0 when it is not set
}

// A host is one pacing key's part of the frontier. Its fields are guarded
// by the Frontier's mu.
type host struct {
	key     string
	q       urlQueue
	retry   string    // a URL given back by Requeue, handed out before q's
	held    int       // URLs counted against maxHostURLs: queued, out, being added
	state   hostState //
	fetched bool      // a robots.txt prefetch ran since the host's last turn
	index   int32     // in due, or -1
	turn    uint32    // numbers the host's turns, so that a stale Turn does nothing
	at      int64     // when to look at the host next, on the frontier's clock
	seq     uint64    // when it was put into due, for the order of hosts due together
}

// hostState is where a host is.
type hostState uint8

const (
	idle     hostState = iota // no URL queued, nothing under way
	queued                    // in due
	asking                    // a Next call asks the transport about it
	fetching                  // its robots.txt is prefetched, or waits to be
	out                       // a URL of it is out, in a Turn
)

// queuedLen returns the URLs of h queued, not out.
func (h *host) queuedLen() int {
	if h.retry != "" {
		return h.q.n + 1
	}
	return h.q.n
}

// head returns h's next URL, which must exist.
func (h *host) head() string {
	if h.retry != "" {
		return h.retry
	}
	return h.q.head()
}

// popHead drops h's next URL, which must exist.
func (h *host) popHead() {
	if h.retry != "" {
		h.retry = ""
		return
	}
	h.q.pop()
}

// New returns an empty Frontier whose URLs are fetched through t, usually
// a [*polite.PoliteTransport].
func New(t Transport, o Options) *Frontier {
	f := &Frontier{
		t:           t,
		maxURLs:     o.MaxURLs,
		maxHostURLs: o.MaxHostURLs,
		seen:        o.Seen,
		refused:     o.Refused,
		prefetch:    o.RobotsPrefetch,
		epoch:       time.Now(),
		hosts:       make(map[string]*host),
	}
	if f.maxURLs <= 0 {
		f.maxURLs = defaultMaxURLs
	}
	if f.maxHostURLs <= 0 {
		f.maxHostURLs = defaultMaxHostURLs
	}
	if f.prefetch == 0 {
		f.prefetch = defaultPrefetch
	}
	if o.Dedup {
		set, seen := new(SeenSet), f.seen
		f.seen = set.Seen
		if seen != nil {
			f.seen = func(ctx context.Context, rawURL string) (bool, error) {
				if s, err := seen(ctx, rawURL); s || err != nil {
					return s, err
				}
				return set.Seen(ctx, rawURL)
			}
		}
	}
	return f
}

// now returns the time on the frontier's clock.
func (f *Frontier) now() int64 { return int64(time.Since(f.epoch)) }

// clock returns t on the frontier's clock; the zero time is long past.
func (f *Frontier) clock(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return int64(t.Sub(f.epoch))
}

// Add queues rawURL, an absolute http or https URL, at the tail of its
// pacing key's queue, unless Options.Seen reports it seen. It reports
// whether it queued the URL. It fails for a URL that is not http or https,
// with [ErrFull] or [ErrHostFull] when the URL would pass a bound (see
// the package documentation), or with the Seen hook's error; a URL that
// Add did not queue is not marked seen unless the hook itself did so.
// ctx is passed to the hook.
func (f *Frontier) Add(ctx context.Context, rawURL string) (bool, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return false, err
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return false, fmt.Errorf("frontier: %q is not an absolute http or https URL", rawURL)
	}
	key := f.t.PacingKey(u)

	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.hosts[key]
	switch {
	case f.held >= f.maxURLs:
		return false, ErrFull
	case h != nil && h.held >= f.maxHostURLs:
		return false, ErrHostFull
	}
	if h == nil {
		h = &host{key: key, index: -1}
		f.hosts[key] = h
	}
	h.held++ // the URL's place, held while the hook runs
	f.held++
	if f.seen != nil {
		f.adding++
		f.mu.Unlock()
		seen, err := f.seen(ctx, rawURL)
		f.mu.Lock()
		f.adding--
		if err != nil || seen {
			h.held--
			f.held--
			f.settleLocked(h, f.now())
			f.signalLocked(f.now())
			return false, err
		}
	}
	h.q.push(rawURL)
	f.queued++
	if h.state == idle {
		f.settleLocked(h, f.now())
		f.signalLocked(f.now())
	}
	return true, nil
}

// Next returns the next URL of a host that can take a request now, in a
// [Turn] that the caller ends with Done or Requeue; the host has no other
// URL out until then. It waits until a host is ready, or ctx ends, and
// then returns ctx's error. It returns [ErrEmpty] when the frontier holds
// no URL and none is being added. Before it returns, it may pass URLs that
// robots.txt refuses to Options.Refused, and start robots.txt prefetches.
func (f *Frontier) Next(ctx context.Context) (Turn, error) {
	var wake chan struct{} // this call's place among the waiters, made when first needed
	f.mu.Lock()
	for {
		if err := ctx.Err(); err != nil {
			f.mu.Unlock()
			return Turn{}, err
		}
		now := f.now()
		if len(f.due) > 0 && f.due[0].at <= now {
			h := heap.Pop(&f.due).(*host)
			h.state = asking
			f.busy++
			u := h.head()
			f.signalLocked(now) // another host may be due as well
			f.mu.Unlock()
			if t, ok, err := f.consider(ctx, h, u); ok || err != nil {
				return t, err
			}
			f.mu.Lock()
			continue
		}
		if f.emptyLocked() {
			f.mu.Unlock()
			return Turn{}, ErrEmpty
		}
		if wake == nil {
			wake = make(chan struct{}, 1)
		}
		f.waiters = append(f.waiters, wake)
		f.signalLocked(now)
		f.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			f.mu.Lock()
			if !f.leaveLocked(wake) {
				f.signalLocked(f.now()) // woken meanwhile: wake another in its place
			}
			f.mu.Unlock()
			return Turn{}, ctx.Err()
		}
		f.mu.Lock()
	}
}

// consider asks the transport about u, the next URL of h, which the caller
// took out of due, and hands it out if h is ready and robots.txt allows it
// (ok), or puts h back where it belongs. It fails only when ctx ends. It
// runs without f.mu.
func (f *Frontier) consider(ctx context.Context, h *host, u string) (t Turn, ok bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return f.handOut(h, u), true, nil // Add parsed it: its request fails on its own
	}
	r, err := f.t.Ready(req)
	now := f.now()
	switch at := f.clock(r.Next); {
	case ctx.Err() != nil:
		f.putBack(h, now)
		return Turn{}, false, ctx.Err()
	case err != nil:
		return f.handOut(h, u), true, nil // the request decides, and waits, for itself
	case r.Busy:
		f.putBack(h, max(at, now+int64(busyPoll)))
		return Turn{}, false, nil
	case at > now:
		f.putBack(h, at)
		return Turn{}, false, nil
	case !r.RobotsKnown:
		if f.prefetch > 0 && f.startPrefetch(ctx, h) {
			return Turn{}, false, nil
		}
		return f.handOut(h, u), true, nil // its request fetches robots.txt
	}
	d, err := f.t.Check(req)
	switch {
	case ctx.Err() != nil:
		f.putBack(h, now)
		return Turn{}, false, ctx.Err()
	case err == nil && refuses(d):
		f.refuse(h, u, d)
		return Turn{}, false, nil
	}
	return f.handOut(h, u), true, nil
}

// refuses reports whether d keeps its request from being sent.
func refuses(d polite.Decision) bool { return d.Mode == polite.RobotsEnforce && !d.Allowed }

// handOut gives u, the next URL of h, to a worker.
func (f *Frontier) handOut(h *host, u string) Turn {
	f.mu.Lock()
	defer f.mu.Unlock()
	h.popHead()
	f.queued--
	h.state = out
	h.turn++
	return Turn{URL: u, Queue: f, Ref: h, Seq: int64(h.turn)}
}

// putBack puts h, which a Next call asked about, back into due at at.
func (f *Frontier) putBack(h *host, at int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.busy--
	h.state = idle
	f.settleLocked(h, at)
	f.signalLocked(f.now())
}

// refuse drops u, the next URL of h, which robots.txt refuses by d, and
// reports it; h's next URL is looked at at once, since it may be of
// another origin.
func (f *Frontier) refuse(h *host, u string, d polite.Decision) {
	f.mu.Lock()
	f.dropHeadLocked(h)
	f.mu.Unlock()
	f.putBack(h, f.now())
	if f.refused != nil {
		f.refused(u, d)
	}
}

// dropHeadLocked drops h's next URL for good.
func (f *Frontier) dropHeadLocked(h *host) {
	h.popHead()
	h.held--
	f.held--
	f.queued--
}

// startPrefetch starts a robots.txt prefetch for h, which a Next call
// asked about, or queues h for one; false when h was prefetched since its
// last turn, and its URL should be handed out instead.
func (f *Frontier) startPrefetch(ctx context.Context, h *host) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if h.fetched {
		return false
	}
	h.state, h.fetched = fetching, true
	if f.fetching == f.prefetch {
		f.fetchWait = append(f.fetchWait, h)
		return true
	}
	f.fetching++
	go f.prefetchLoop(context.WithoutCancel(ctx), h)
	return true
}

// prefetchLoop prefetches the robots.txt of h, then of the hosts waiting
// for a prefetch, until none is left. It decides each host's next URL by
// Check, which fetches the file, and drops it if refused; then the host
// goes back into due, to be asked again.
func (f *Frontier) prefetchLoop(ctx context.Context, h *host) {
	for h != nil {
		f.mu.Lock()
		u := h.head()
		f.mu.Unlock()
		var d polite.Decision
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err == nil {
			d, err = f.t.Check(req)
		}
		refused := err == nil && refuses(d)

		f.mu.Lock()
		if refused {
			f.dropHeadLocked(h)
		}
		f.busy--
		h.state = idle
		f.settleLocked(h, f.now())
		f.signalLocked(f.now())
		h = nil
		if len(f.fetchWait) > 0 {
			h = f.fetchWait[0]
			f.fetchWait[0] = nil
			f.fetchWait = f.fetchWait[1:]
		} else {
			f.fetching--
			f.fetchWait = nil
		}
		f.mu.Unlock()
		if refused && f.refused != nil {
			f.refused(u, d)
		}
	}
}

// Done implements [Queue]: it ends t, and its URL leaves the frontier. A
// Turn that another Queue handed out, or that has ended, is left alone.
func (f *Frontier) Done(t Turn) { f.end(t, false) }

// Requeue implements [Queue]: it ends t, and gives its URL back to the
// head of its host's queue.
func (f *Frontier) Requeue(t Turn) { f.end(t, true) }

// end ends turn t: Done, or Requeue when requeue is set.
func (f *Frontier) end(t Turn, requeue bool) {
	h, ok := t.Ref.(*host)
	if !ok || t.Queue != Queue(f) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if h.state != out || int64(h.turn) != t.Seq {
		return // ended already
	}
	f.busy--
	h.state = idle
	h.fetched = false
	if requeue {
		h.retry = t.URL
		f.queued++
	} else {
		h.held--
		f.held--
	}
	f.settleLocked(h, f.now()) // its state changed: ask about it again
	f.signalLocked(f.now())
}

// settleLocked puts h, which is idle, where it belongs: into due at at when
// it has URLs queued, or out of the frontier when it holds none.
func (f *Frontier) settleLocked(h *host, at int64) {
	switch {
	case h.state != idle:
	case h.queuedLen() > 0:
		h.state = queued
		h.at = at
		f.seq++
		h.seq = f.seq
		heap.Push(&f.due, h)
	case h.held == 0:
		delete(f.hosts, h.key)
	}
}

// emptyLocked reports whether nothing is queued, under way or being added:
// Next has nothing to wait for.
func (f *Frontier) emptyLocked() bool {
	return len(f.due) == 0 && f.busy == 0 && f.adding == 0
}

// signalLocked wakes what the frontier's state calls for: a waiting Next
// call when the top of due has come, every waiting call when the frontier
// is empty; otherwise it sets the alarm for when the top of due comes.
func (f *Frontier) signalLocked(now int64) {
	if len(f.waiters) == 0 {
		return
	}
	if f.emptyLocked() {
		for _, w := range f.waiters {
			w <- struct{}{}
		}
		clear(f.waiters)
		f.waiters = f.waiters[:0]
		return
	}
	if len(f.due) == 0 {
		return
	}
	at := f.due[0].at
	if at <= now {
		w := f.waiters[0]
		f.waiters[0] = nil
		f.waiters = f.waiters[1:]
		w <- struct{}{}
		return
	}
	if f.alarmAt != 0 && f.alarmAt <= at {
		return // it goes off by then
	}
	f.alarmAt = at
	if f.alarm == nil {
		f.alarm = time.AfterFunc(time.Duration(at-now), f.ring)
		return
	}
	f.alarm.Reset(time.Duration(at - now))
}

// ring is the alarm's: the top of due has come.
func (f *Frontier) ring() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.alarmAt = 0
	f.signalLocked(f.now())
}

// leaveLocked takes w out of the waiters; false when it was not there,
// having been woken.
func (f *Frontier) leaveLocked(w chan struct{}) bool {
	for i, x := range f.waiters {
		if x == w {
			f.waiters = append(f.waiters[:i], f.waiters[i+1:]...)
			return true
		}
	}
	return false
}

// Len returns the number of URLs queued, not counting those out.
func (f *Frontier) Len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.queued
}

// HostLen returns the number of URLs queued for the pacing key key, not
// counting one out.
func (f *Frontier) HostLen(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if h := f.hosts[key]; h != nil {
		return h.queuedLen()
	}
	return 0
}
