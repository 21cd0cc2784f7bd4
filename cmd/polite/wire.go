package main

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/polite-go/polite/cmd/polite/internal/backoff"
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
	Backoff    bool          // the transport backs the host off on this response (see backoff.On)
}

// backedOff reports whether the transport backed the host off on r: r.Backoff
// as the recorder saw it, or a backoff status in a record made without it.
func (r wireRequest) backedOff() bool { return r.Backoff || backoff.Status(r.Status) }

// Latency is the time from start to response headers.
func (r wireRequest) Latency() time.Duration { return r.End.Sub(r.Start) }

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
		if r.Backoff = backoff.On(resp.StatusCode, resp.Header); r.Backoff {
			r.RetryAfter = backoff.RetryAfter(resp.Header, r.End)
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
