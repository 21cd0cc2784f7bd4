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
	"sync/atomic"
	"time"

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
	refused     atomic.Uint64 // requests refused
	wouldRefuse atomic.Uint64 // requests RobotsReport let through that it would have refused
}

// countsOf returns prev's counts, so that every copy of an origin's record
// counts in one place, or new ones when prev is nil.
func countsOf(prev *robotsRecord) *robotsCounts {
	if prev == nil {
		return new(robotsCounts)
	}
	return prev.counts
}

// robotsCost is what a record of a file of n bytes may keep on the heap,
// parsed and with every group's matcher compiled, as the robots cache's
// budget counts it: 16 bytes a byte of the file, above the most measured
// (BENCHMARKS.md), and 2 KiB for the record itself.
func robotsCost(n int) int64 { return 16*int64(n) + 2<<10 }

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
func (t *PoliteTransport) fetchRobots(ctx context.Context, k originKey, prev *robotsRecord) (r *robotsRecord, body []byte) {
	start := time.Now()
	r = &robotsRecord{url: k.fetchURL(), counts: countsOf(prev)}

	// Until the file is read, the pacer keeps each host fetched from for
	// as long as any Crawl-delay may ask.
	var tickets []ticket
	defer func() {
		f := r.file
		if f == nil && prev != nil {
			f = prev.file // the copy that stays in force
		}
		var d time.Duration
		if f != nil {
			d = f.MaxCrawlDelay()
		}
		if rp := t.pacer.robots; rp != nil {
			for _, tk := range tickets {
				rp.fetchedRobots(tk, d)
			}
		}
	}()
	target := k.fetchURL()
	for hop := 0; ; hop++ {
		req, tk, err := t.robotsRequest(ctx, target)
		if err != nil {
			r.err = err
			break
		}
		if rp := t.pacer.robots; rp != nil {
			rp.fetchingRobots(tk)
		}
		tickets = append(tickets, tk)
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
			ctx, cancel = context.WithTimeout(ctx, t.robotsTimeout)
			defer cancel()
		}
		resp, err := t.sendRobots(tk, req.WithContext(keepDialTarget(ctx, req.Context())))
		if err != nil {
			r.err = err
			break
		}
		r.status = resp.StatusCode
		next := ""
		switch code := resp.StatusCode; {
		case code >= 200 && code < 300:
			b, err := readRobots(resp.Body)
			if err != nil {
				r.err = fmt.Errorf("reading %s: %w", target, err)
				break
			}
			body = b
			r.file = robotstxt.Parse(body)
			r.cost = robotsCost(len(body))
			r.etag, r.modified, r.lifetime = resp.Header.Get("ETag"), resp.Header.Get("Last-Modified"), lifetime(resp.Header)
		case code == http.StatusNotModified && hop == 0 && prev != nil && prev.file != nil:
			closeBody(resp.Body)
			r.file, r.etag, r.modified, r.cost = prev.file, prev.etag, prev.modified, prev.cost
			r.lifetime = lifetime(resp.Header)
			if r.lifetime == 0 {
				r.lifetime = prev.lifetime
			}
		case code >= 300 && code < 400:
			closeBody(resp.Body)
			if to, ok := redirectTarget(target, resp.Header.Get("Location")); ok && hop < robotsMaxRedirects {
				next = to
			}
			// Else too many redirects, or nowhere to go: unavailable, as
			// Google treats it.
		case code == http.StatusTooManyRequests || code >= 500:
			closeBody(resp.Body)
			r.err = fmt.Errorf("%s answered %s", target, resp.Status)
		default: // 4xx and anything else: unavailable, no rules apply
			closeBody(resp.Body)
		}
		if next == "" {
			break
		}
		target = next
	}
	r.fetchedAt = time.Now()
	r.duration = r.fetchedAt.Sub(start)

	status, took := r.status, r.duration
	if r.err != nil && prev != nil && prev.good() {
		// Unreachable now, but there is a good copy: keep it.
		r, body = &robotsRecord{url: prev.url, status: prev.status, fetchedAt: prev.fetchedAt,
			duration: prev.duration, file: prev.file, cost: prev.cost, stale: true, err: r.err, counts: prev.counts}, nil
	}
	r.disallow = t.closed(r)
	t.emitRobots(r, k, status, took)
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
func (t *PoliteTransport) robotsRequest(ctx context.Context, target string) (*http.Request, ticket, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, ticket{}, err
	}
	if t.userAgent != "" {
		req.Header.Set("User-Agent", t.userAgent)
	}
	key, dial, err := t.pacingKeyOf(ctx, req.URL)
	if err != nil {
		return nil, ticket{}, err
	}
	if dial != nil {
		req = req.WithContext(withDialTarget(ctx, dial))
	}
	tk, err := t.admit(ctx, key, 0)
	if err != nil {
		return nil, ticket{}, err
	}
	return req, tk, nil
}

// sendRobots sends req, admitted with tk, through the base transport and
// releases tk with the Outcome. It runs on the fetch's own goroutine,
// where nothing could recover a panic, so a base that panics, or answers
// without a response or a body, makes an error that says what it did; the
// file is then unreachable.
func (t *PoliteTransport) sendRobots(tk ticket, req *http.Request) (resp *http.Response, err error) {
	defer func() {
		if p := recover(); p != nil {
			resp, err = nil, fmt.Errorf("polite: base RoundTripper %T panicked fetching %s: %v", t.robotsBase, req.URL, p)
		}
		t.release(tk, t.sentKey(req), req.URL, classify(resp, err, nil), resp, err)
		if err != nil && resp != nil {
			if resp.Body != nil {
				closeBody(resp.Body)
			}
			resp = nil
		}
	}()
	resp, err = t.robotsBase.RoundTrip(req)
	switch {
	case err == nil && resp == nil:
		err = fmt.Errorf("polite: base RoundTripper %T returned no response and no error fetching %s", t.robotsBase, req.URL)
	case err == nil && resp.Body == nil:
		err = fmt.Errorf("polite: base RoundTripper %T returned a response without a body fetching %s", t.robotsBase, req.URL)
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

// redirectTarget resolves a Location header against from; ok is false when
// it is missing, unparsable, or not http or https.
func redirectTarget(from, location string) (string, bool) {
	if location == "" {
		return "", false
	}
	base, err := url.Parse(from)
	if err != nil {
		return "", false
	}
	u, err := base.Parse(location)
	if err != nil {
		return "", false
	}
	if k, ok := originOf(u); !ok || k.host == "" {
		return "", false
	}
	return u.String(), true
}

// emitRobots reports the end of a fetch of k's robots.txt that gave r.
func (t *PoliteTransport) emitRobots(r *robotsRecord, k originKey, status int, took time.Duration) {
	if !t.events.on() {
		return
	}
	ev := Event{Kind: EventRobotsFetched, Key: t.originPacingKey(k),
		URL: k.fetchURL(), Status: status, Duration: took}
	if r.err != nil {
		ev.Kind, ev.Err, ev.Stale = EventRobotsUnreachable, r.err, r.stale
	} else if r.file != nil {
		ev.Rules, ev.Skipped = r.file.NumRules(), r.file.NumSkipped()
	}
	t.events.emit(ev)
}
