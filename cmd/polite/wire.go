package main

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// A wireRecorder is the base RoundTripper the commands hand to polite.New.
// Every request that reaches the network passes through it, robots.txt
// fetches included, so what it records is what really went on the wire:
// the crawl's table and the demo's verdict are computed from it, not from
// what the transport says about itself.
type wireRecorder struct {
	base http.RoundTripper

	mu  sync.Mutex    // guards log
	log []wireRequest // in order of start
}

// A wireRequest is one request as the wire saw it.
type wireRequest struct {
	Host       string        // pacing key: the lower-cased host name
	URL        string        // the request's URL
	Robots     bool          // a robots.txt fetch
	Start      time.Time     // when it was handed to the base transport
	End        time.Time     // when the response headers, or the error, came back
	Status     int           // 0 when there was no response
	Err        string        // the base transport's error, if any
	RetryAfter time.Duration // the Retry-After of a backoff, capped at one hour; 0 if none
	Backoff    bool          // the transport backs the host off on this response (see backsOff)
}

// backoff reports whether the transport backed the host off on r: r.Backoff
// as the recorder saw it, or a backoff status in a record made without it.
func (r wireRequest) backoff() bool { return r.Backoff || backoffStatus(r.Status) }

// Latency is the time from start to response headers.
func (r wireRequest) Latency() time.Duration { return r.End.Sub(r.Start) }

// backoffStatus reports whether the transport backs off on status: 429 and
// every 5xx but 501 and 505, as the package documentation says. Like
// retryAfter, it is the recorder's own, and a test holds it to the
// transport.
func backoffStatus(status int) bool {
	return status == http.StatusTooManyRequests ||
		500 <= status && status <= 599 && status != http.StatusNotImplemented && status != http.StatusHTTPVersionNotSupported
}

// backsOff reports whether the transport backs off on a response with
// status and header h: a backoffStatus, or any other 4xx or 5xx that has a
// Retry-After it can read, as the package documentation says.
func backsOff(status int, h http.Header) bool {
	if backoffStatus(status) {
		return true
	}
	if status < 400 || status > 599 {
		return false
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	_, date := httpDate(v)
	return v != "" && (strings.Trim(v, "0123456789") == "" || date)
}

// RoundTrip implements http.RoundTripper.
func (w *wireRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now() // first: this is the start the pacing is judged by
	if m, ok := req.Context().Value(waitMeterKey{}).(*waitMeter); ok {
		m.started(start)
	}
	resp, err := w.base.RoundTrip(req)
	r := wireRequest{
		Host:   strings.ToLower(req.URL.Hostname()),
		URL:    req.URL.String(),
		Robots: req.URL.EscapedPath() == "/robots.txt",
		Start:  start,
		End:    time.Now(),
	}
	if m, ok := req.Context().Value(waitMeterKey{}).(*waitMeter); ok {
		m.ended(r.End)
	}
	if err != nil {
		r.Err = err.Error()
	} else {
		r.Status = resp.StatusCode
		if r.Backoff = backsOff(resp.StatusCode, resp.Header); r.Backoff {
			r.RetryAfter = retryAfter(resp.Header, r.End)
		}
	}
	w.mu.Lock()
	w.log = append(w.log, r)
	w.mu.Unlock()
	return resp, err
}

// CloseIdleConnections forwards to the base transport, so that
// PoliteTransport's CloseIdleConnections reaches it.
func (w *wireRecorder) CloseIdleConnections() {
	type closeIdler interface{ CloseIdleConnections() }
	if ci, ok := w.base.(closeIdler); ok {
		ci.CloseIdleConnections()
	}
}

// requests returns a copy of the log, ordered by start.
func (w *wireRecorder) requests() []wireRequest {
	w.mu.Lock()
	out := slices.Clone(w.log)
	w.mu.Unlock()
	slices.SortStableFunc(out, func(a, b wireRequest) int { return a.Start.Compare(b.Start) })
	return out
}

// maxRetryAfter is the cap the transport puts on a Retry-After.
const maxRetryAfter = time.Hour

// retryAfter parses the Retry-After header of a 429 or 5xx by the rules the
// transport follows (retryafter.go, at the repository's root), and returns
// 0 when there is none or it cannot be read.
//
// It is written here rather than taken from package polite on purpose: the
// recorder judges the transport, so it must not share the transport's code
// (it could not anyway: the library's parser is unexported). A test in
// wire_test.go holds the two in agreement, through the transport's Stats.
//
// The value is delay-seconds, digits only ("+7", "-5" and "1.5" cannot be
// read), or an HTTP-date (see httpDate). A date is measured against the
// response's Date header, or against now without a usable one; a date in the
// past gives 0. Every result is capped at maxRetryAfter, however many digits
// the seconds have.
func retryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if d, ok := delaySeconds(v); ok {
		return d
	}
	at, ok := httpDate(v)
	if !ok {
		return 0
	}
	if date, ok := httpDate(strings.TrimSpace(h.Get("Date"))); ok {
		now = date
	}
	return min(max(at.Sub(now), 0), maxRetryAfter)
}

// delaySeconds reads v as delay-seconds, 1*DIGIT (RFC 9110 §10.2.3),
// capped at maxRetryAfter. ok is false when v is not all digits.
func delaySeconds(v string) (d time.Duration, ok bool) {
	if v == "" {
		return 0, false
	}
	const limit = int64(maxRetryAfter / time.Second)
	var n int64
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if n < limit { // past the cap the rest need only be digits
			n = n*10 + int64(c-'0')
		}
	}
	return time.Duration(min(n, limit)) * time.Second, true
}

// httpDate parses an HTTP-date in any of the three forms of RFC 9110
// §5.6.7 (IMF-fixdate, the obsolete RFC 850 form and asctime), or in the
// RFC 1123 form with the zone "UTC", which some servers send. A zone other
// than GMT or UTC is refused: its meaning would depend on this machine's
// time zone.
func httpDate(v string) (time.Time, bool) {
	for _, layout := range []string{time.RFC1123, time.RFC850, time.ANSIC} {
		t, err := time.Parse(layout, v)
		if err != nil {
			continue
		}
		if layout == time.ANSIC { // no zone: GMT by definition
			return t, true
		}
		if name, offset := t.Zone(); offset == 0 && (name == "GMT" || name == "UTC") {
			return t, true
		}
		return time.Time{}, false
	}
	return time.Time{}, false
}

// A waitMeter, put in a request's context, measures how long the request
// waited inside the transport: from each hand-over to the transport (mark)
// until the wire saw it start. get uses it to report the time waited.
type waitMeter struct {
	mu      sync.Mutex // guards the fields below
	mark    time.Time  // when the request, or its last redirect, was handed over
	start   time.Time  // when the last hop reached the wire
	waited  time.Duration
	latency time.Duration // of the last hop: start to response headers
	sent    bool          // the request reached the wire
}

type waitMeterKey struct{}

// withWaitMeter returns ctx carrying m, with m's mark set to now.
func withWaitMeter(ctx context.Context, m *waitMeter) context.Context {
	m.mark = time.Now()
	return context.WithValue(ctx, waitMeterKey{}, m)
}

func (m *waitMeter) started(at time.Time) {
	m.mu.Lock()
	m.waited += max(at.Sub(m.mark), 0)
	m.start, m.sent = at, true
	m.mu.Unlock()
}

// ended sets the mark for a redirect that may follow.
func (m *waitMeter) ended(at time.Time) {
	m.mu.Lock()
	m.mark = at
	m.latency = at.Sub(m.start)
	m.mu.Unlock()
}

// result returns the time waited, the time the last hop took to answer,
// and whether the request reached the wire.
func (m *waitMeter) result() (waited, latency time.Duration, sent bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.waited, m.latency, m.sent
}
