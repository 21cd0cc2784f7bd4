package polite

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/polite-go/polite/pace"
	"github.com/polite-go/polite/robotstxt"
)

const (
	// robotsMaxBytes is how much of a robots.txt is read: RFC 9309 §2.5
	// asks for at least 500 KiB and lets the rest be ignored.
	robotsMaxBytes = 500 << 10
	// robotsMaxRedirects is how many redirects a robots.txt fetch follows
	// (RFC 9309 §2.3.1.2: at least five). One more means unavailable.
	robotsMaxRedirects = 5
)

// robotsRecord is what the transport knows of one origin's robots.txt: how
// its last fetch went, and the rules in force. It is immutable once built,
// but for the matchers its file compiles lazily (package robotstxt).
type robotsRecord struct {
	url       string          // as fetched: "https://example.com/robots.txt"
	status    int             // HTTP status of the last fetch; 0 when no response came
	fetchedAt time.Time       // when the last fetch ended
	duration  time.Duration   // how long the last fetch took
	err       error           // why the file is unreachable; nil when it was reached
	file      *robotstxt.File // nil when no file applies (4xx, or unreachable)
	disallow  bool            // unreachable under FailClosed: refuse every URL
	stale     bool            // the last fetch failed; these rules are the last good copy
	etag      string          // the file's ETag, for revalidation; "" if none
	modified  string          // the file's Last-Modified, likewise
	lifetime  time.Duration   // from the file's Cache-Control max-age, at least minRobotsTTL; 0 if none
	expires   time.Time       // when a RobotsStore has the file fetched again; zero: the cache decides (robots_cache.go)
	storeErr  error           // the RobotsStore failed: no file, and requests fail with this error
	cost      int64           // what the record may keep, in bytes: see robotsCost
	counts    *robotsCounts   // shared by every copy of one origin's record
}

// robotsCounts counts what an origin's robots.txt did to requests.
type robotsCounts struct {
	refused          atomic.Uint64 // requests refused
	wouldRefuse      atomic.Uint64 // requests RobotsReport let through that it would have refused
	usageRefused     atomic.Uint64 // requests refused for a use its usage preferences disallow (usage.go)
	usageWouldRefuse atomic.Uint64 // such requests that RobotsReport let through
	undecided        atomic.Uint64 // requests its engine did not decide (see WithRobotsFailure)
}

// countsOf returns prev's counts, so that every copy of an origin's record
// counts in one place, or new ones when prev is nil.
func countsOf(prev *robotsRecord) *robotsCounts {
	if prev == nil {
		return new(robotsCounts)
	}
	return prev.counts
}

// robotsCost is what a record of file may keep on the heap, as the robots
// cache's budget counts it: the bound that the file gives of itself,
// parsed and with every group compiled ([robotstxt.File.Cost]), and 2 KiB
// for the record.
func robotsCost(file *robotstxt.File) int64 { return file.Cost() + 2<<10 }

// crawlDelay returns the Crawl-delay of the groups of r's file that bind
// the product token, not clamped; 0 when there is none or no file.
func (r *robotsRecord) crawlDelay(token string) time.Duration {
	if r.file == nil {
		return 0
	}
	return r.file.Group(token).CrawlDelay()
}

// good reports whether r came from a robots.txt that was reached, now or,
// for a stale copy, before.
func (r *robotsRecord) good() bool { return r.err == nil || r.stale }

// fetchRobots fetches k's robots.txt through the base transport, paced like
// any request to the host, and reads it per RFC 9309 §2.3.1: 2xx is parsed,
// 3xx followed, other 4xx means no rules, and 429, 5xx, a network error or
// a timeout mean unreachable. prev is the copy in force, if any: when the
// file is unreachable, it stays in force. body is the file read, or nil
// when there is none or r keeps prev's.
//
// WithRobotsTimeout bounds the whole fetch, redirects and their waits
// included, from the moment the first request may start: waiting for that
// turn is not counted, since a host paused by a backoff is not unreachable.
// ctx bounds that wait alone: when it ends first, fetchRobots returns a
// nil record, having learned nothing; once the first request may start,
// the fetch goes on to its end whatever becomes of ctx.
func (t *PoliteTransport) fetchRobots(ctx context.Context, k originKey, prev *robotsRecord) (r *robotsRecord, body []byte) {
	start := time.Now()
	r = &robotsRecord{url: k.fetchURL(), counts: countsOf(prev)}

	// Until the file is read, the Pacer keeps each key fetched from for
	// as long as any Crawl-delay may ask (pace.Request.Robots); then it is
	// told what the file asks.
	var leases []pace.Lease
	defer func() {
		if len(leases) == 0 {
			return
		}
		f := r.file
		if f == nil && prev != nil {
			f = prev.file // the copy that stays in force
		}
		var d time.Duration
		if f != nil {
			d = f.MaxCrawlDelay()
		}
		for _, l := range leases {
			t.pacer.RobotsRead(l, d)
		}
	}()
	target, away := k.fetchURL(), false // away: target is on another host than k's
	for hop := 0; ; hop++ {
		req, l, err := t.robotsRequest(ctx, target)
		if err != nil && hop == 0 && ctx.Err() != nil {
			return nil, nil // called off before it started
		}
		if err != nil {
			r.err = err
			break
		}
		leases = append(leases, l)
		if hop == 0 && prev != nil && prev.file != nil && !prev.stale {
			// A conditional request: a 304 keeps the parsed rules.
			if prev.etag != "" {
				req.Header.Set("If-None-Match", prev.etag)
			}
			if prev.modified != "" {
				req.Header.Set("If-Modified-Since", prev.modified)
			}
		}
		if hop == 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), t.robotsTimeout)
			defer cancel()
		}
		rt := t.robotsBase
		if away {
			rt = t.robotsAway
		}
		resp, b, err := t.sendRobots(rt, l, req.WithContext(keepDialTarget(ctx, req.Context())))
		if resp != nil {
			r.status = resp.StatusCode
		}
		if err != nil {
			r.err = err
			break
		}
		next := ""
		switch code := resp.StatusCode; {
		case code >= 200 && code < 300:
			body = b
			r.file = robotstxt.Parse(body)
			r.cost = robotsCost(r.file)
			r.etag, r.modified, r.lifetime = resp.Header.Get("ETag"), resp.Header.Get("Last-Modified"), lifetime(resp.Header)
		case code == http.StatusNotModified && hop == 0 && prev != nil && prev.file != nil:
			r.file, r.etag, r.modified, r.cost = prev.file, prev.etag, prev.modified, prev.cost
			r.lifetime = lifetime(resp.Header)
			if r.lifetime == 0 {
				r.lifetime = prev.lifetime
			}
		case code >= 300 && code < 400:
			to, host, ok := redirectTarget(target, resp.Header.Get("Location"))
			switch {
			case !ok || hop == robotsMaxRedirects:
				// Too many redirects, or nowhere to go: unavailable, as
				// Google treats it.
			case host != k.host && t.robotsAway == nil:
				r.err = fmt.Errorf("polite: %s redirects to %s, on another host, which the base transport %T could send its credentials to; WithRobotsTransport sets a transport to follow it through", target, to, t.base)
			default:
				next, away = to, host != k.host
			}
		case code == http.StatusTooManyRequests || code >= 500:
			r.err = fmt.Errorf("%s answered %s", target, resp.Status)
		default: // 4xx and anything else: unavailable, no rules apply
		}
		if next == "" {
			break
		}
		target = next
	}
	r.fetchedAt = time.Now()
	r.duration = r.fetchedAt.Sub(start)

	status, ended, took, size := r.status, r.fetchedAt, r.duration, len(body)
	if r.err != nil && prev != nil && prev.good() {
		// Unreachable now, but there is a good copy: keep it.
		r, body = &robotsRecord{url: prev.url, status: prev.status, fetchedAt: prev.fetchedAt,
			duration: prev.duration, file: prev.file, cost: prev.cost, stale: true, err: r.err, counts: prev.counts}, nil
	}
	r.disallow = t.closed(r)
	if t.events.on() {
		t.emitRobots(requesterOf(ctx), r, k, status, ended, took, size)
	}
	return r, body
}

// closed reports whether r makes every URL of its origin disallowed: its
// file is unreachable, with no earlier good copy, under FailClosed.
func (t *PoliteTransport) closed(r *robotsRecord) bool {
	return r.err != nil && !r.stale && t.robotsFailure == FailClosed
}

// lifetime returns the max-age of h's Cache-Control, at least
// minRobotsTTL, so that max-age=0 does not fetch robots.txt before every
// page; or 0 when it has none.
func lifetime(h http.Header) time.Duration {
	for _, v := range h.Values("Cache-Control") {
		for directive := range strings.SplitSeq(v, ",") {
			name, value, _ := strings.Cut(strings.TrimSpace(directive), "=")
			if strings.EqualFold(name, "max-age") {
				if secs, err := strconv.ParseInt(strings.Trim(value, `"`), 10, 64); err == nil && secs >= 0 {
					return max(secondsDuration(float64(secs)), minRobotsTTL)
				}
			}
		}
	}
	return 0
}

// robotsRequest makes one robots.txt request to target, with the configured
// User-Agent and no other header, and waits, as long as ctx lets it, for
// the global limiter and the host's turn.
func (t *PoliteTransport) robotsRequest(ctx context.Context, target string) (*http.Request, pace.Lease, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, pace.Lease{}, err
	}
	if t.userAgent != "" {
		req.Header.Set("User-Agent", t.userAgent)
	}
	key, dial, err := t.pacingKeyOf(ctx, req.URL)
	if err != nil {
		return nil, pace.Lease{}, err
	}
	if dial != nil {
		req = req.WithContext(withDialTarget(ctx, dial))
	}
	l, err := t.admit(ctx, pace.Request{Key: key, Robots: true})
	if err != nil {
		return nil, pace.Lease{}, err
	}
	return req, l, nil
}

// A robotsHop is one request of a robots.txt fetch, sent on a goroutine of
// its own so that the fetch can stop waiting for a base that does not heed
// the request's context.
type robotsHop struct {
	done chan struct{}  // closed once resp, body and err are set
	resp *http.Response // its body closed; nil when err is the base's
	body []byte         // a 2xx's body, as readRobots reads it
	err  error

	mu     sync.Mutex  // guards the fields below
	state  int         // what became of the request: one of the hop constants
	gaveUp error       // why the fetch gave up on it
	hold   *time.Timer // frees its slot when the base holds it too long after the fetch gave up
}

// What became of a robotsHop's request. Its lease is released once, by
// whoever moves it to hopAnswered or hopFreed.
const (
	hopSent      = iota // the request is with the base
	hopAnswered         // the base answered before the fetch gave up: the goroutine releases the lease
	hopAbandoned        // the fetch gave up first, and the base holds the request and its slot
	hopFreed            // then the base returned, or held it too long: the lease is released as a timeout
)

// sendRobots sends req, admitted with l, through rt, and returns the
// response with its body closed: for a 2xx, after reading its first
// robotsMaxBytes (a failed read is an error, with the response). The base
// runs on a goroutine of its own: when req's context ends first,
// sendRobots returns at once with the context's error. The request keeps
// its slot while the base holds it, for one more WithRobotsTimeout at
// most, and is then released as a timeout, which is no latency sample;
// the goroutine closes whatever body the base returns later. A base that
// never returns keeps that goroutine: one per request.
func (t *PoliteTransport) sendRobots(rt http.RoundTripper, l pace.Lease, req *http.Request) (*http.Response, []byte, error) {
	h := &robotsHop{done: make(chan struct{})}
	go t.runHop(h, rt, l, req)
	select {
	case <-h.done:
		return h.resp, h.body, h.err
	case <-req.Context().Done():
	}
	err := fmt.Errorf("polite: fetching %s: %w", req.URL, req.Context().Err())
	h.mu.Lock()
	if h.state == hopSent {
		h.state, h.gaveUp = hopAbandoned, err
		h.hold = time.AfterFunc(t.robotsTimeout, func() { t.freeHop(h, l, req) })
	}
	h.mu.Unlock()
	return nil, nil, err
}

// runHop sends h's request req through rt, and reads or closes the body.
// It runs on a goroutine of its own, where nothing could recover a panic,
// so a base that panics, or answers without a response or a body, makes
// an error that says what it did; the file is then unreachable.
func (t *PoliteTransport) runHop(h *robotsHop, rt http.RoundTripper, l pace.Lease, req *http.Request) {
	defer close(h.done)
	resp, err := roundTripRobots(rt, req)
	h.mu.Lock()
	answered := h.state == hopSent
	if answered {
		h.state = hopAnswered
	}
	h.mu.Unlock()
	if !answered {
		if resp != nil {
			resp.Body.Close() // nobody waits for it
		}
		t.freeHop(h, l, req)
		return
	}
	t.release(l, t.sentKey(req), req, classify(resp, err, nil), resp, err)
	h.resp, h.err = resp, err
	switch {
	case err != nil:
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		if h.body, err = readRobots(resp.Body); err != nil {
			h.err = fmt.Errorf("reading %s: %w", req.URL, err)
		}
	default:
		closeBody(resp.Body)
	}
}

// freeHop releases l, the lease of h's request, which its fetch gave up
// on, as a timeout, unless that is done.
func (t *PoliteTransport) freeHop(h *robotsHop, l pace.Lease, req *http.Request) {
	h.mu.Lock()
	free := h.state == hopAbandoned
	if free {
		h.state = hopFreed
		h.hold.Stop()
	}
	h.mu.Unlock()
	if free {
		t.release(l, t.sentKey(req), req, pace.Outcome{Class: pace.Signal, TimedOut: true}, nil, h.gaveUp)
	}
}

// roundTripRobots sends req through rt. It returns a response or an error,
// never both: it makes an error of a panic, of no response with no error,
// and of a response without a body, and closes the body of a response
// that comes with an error.
func roundTripRobots(rt http.RoundTripper, req *http.Request) (resp *http.Response, err error) {
	defer func() {
		if p := recover(); p != nil {
			resp, err = nil, fmt.Errorf("polite: base RoundTripper %T panicked fetching %s: %v", rt, req.URL, p)
		}
	}()
	resp, err = rt.RoundTrip(req)
	switch {
	case err == nil && resp == nil:
		err = fmt.Errorf("polite: base RoundTripper %T returned no response and no error fetching %s", rt, req.URL)
	case err == nil && resp.Body == nil:
		resp, err = nil, fmt.Errorf("polite: base RoundTripper %T returned a response without a body fetching %s", rt, req.URL)
	case err != nil && resp != nil:
		if resp.Body != nil {
			closeBody(resp.Body)
		}
		resp = nil
	}
	return resp, err
}

// readRobots reads the first robotsMaxBytes of body, drops a line cut in
// two by that limit, and closes body.
func readRobots(body io.ReadCloser) ([]byte, error) {
	defer closeBody(body)
	b, err := io.ReadAll(io.LimitReader(body, robotsMaxBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > robotsMaxBytes {
		b = b[:robotsMaxBytes]
		if i := bytes.LastIndexAny(b, "\r\n"); i >= 0 {
			b = b[:i+1]
		}
	}
	return b, nil
}

// redirectTarget resolves a Location header against from, and returns
// the URL and its host in canonical form; ok is false when it is missing,
// unparsable, or not http or https.
func redirectTarget(from, location string) (to, host string, ok bool) {
	if location == "" {
		return "", "", false
	}
	base, err := url.Parse(from)
	if err != nil {
		return "", "", false
	}
	u, err := base.Parse(location)
	if err != nil {
		return "", "", false
	}
	k, ok := originOf(u)
	if !ok || k.host == "" {
		return "", "", false
	}
	return u.String(), k.host, true
}

// emitRobots reports the end of a fetch of k's robots.txt that gave r,
// for the request of ctx: status, when it ended, how long it took and the
// bytes of the body read.
func (t *PoliteTransport) emitRobots(ctx context.Context, r *robotsRecord, k originKey, status int, ended time.Time, took time.Duration, size int) {
	ev := Event{Kind: EventRobotsFetched, Time: ended, Context: ctx, Key: t.originPacingKey(k),
		URL: k.fetchURL(), Status: status, Duration: took, Bytes: size}
	if r.err != nil {
		ev.Err, ev.Stale = r.err, r.stale
	} else if r.file != nil {
		ev.Rules, ev.Skipped = r.file.NumRules(), r.file.NumSkipped()
	}
	t.events.emit(ev)
}
