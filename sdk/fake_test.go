package politesdk_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"time"
)

// The fakes: each service is an http.Handler that behaves like the real
// one for the fields at hand, served in process by a server, a
// RoundTripper under the polite transport, so that the tests run in a
// testing/synctest bubble, on its clock.

// server serves handler as a RoundTripper and records what reached it.
type server struct {
	handler http.Handler

	mu       sync.Mutex
	hits     []hit
	inFlight int
	most     int // the most requests in flight at once
}

// A hit is a request that reached the server.
type hit struct {
	at     time.Time
	method string
	path   string
	header http.Header
}

// RoundTrip implements http.RoundTripper: it serves req with the handler.
func (s *server) RoundTrip(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	s.hits = append(s.hits, hit{at: time.Now(), method: req.Method, path: req.URL.Path, header: req.Header.Clone()})
	s.inFlight++
	s.most = max(s.most, s.inFlight)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()
	rec := httptest.NewRecorder()
	s.handler.ServeHTTP(rec, req)
	if req.Body != nil {
		req.Body.Close()
	}
	resp := rec.Result()
	resp.Request = req
	return resp, nil
}

// log returns what reached the server so far.
func (s *server) log() []hit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]hit(nil), s.hits...)
}

// maxInFlight returns the most requests that were in flight at once.
func (s *server) maxInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.most
}

// barrier makes handlers wait until n requests are in flight together, or
// until a second has passed, whichever is first; so the requests a client
// sends at once show how many of them its transport lets through.
type barrier struct {
	n    int
	mu   sync.Mutex
	in   int
	full chan struct{}
}

func newBarrier(n int) *barrier { return &barrier{n: n, full: make(chan struct{})} }

func (b *barrier) wait() {
	b.mu.Lock()
	b.in++
	if b.in == b.n {
		close(b.full)
	}
	b.mu.Unlock()
	select {
	case <-b.full:
	case <-time.After(time.Second):
	}
}

// toPresent moves a synctest bubble's clock, which starts in 2000, to
// 2026, so that a Unix time in a rate-limit field reads as one: polite
// takes a reset below 10^9 for seconds from now.
func toPresent() {
	time.Sleep(time.Until(time.Date(2026, 5, 4, 7, 28, 0, 0, time.UTC)))
}
