package politeredis

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/pace"
)

// TestFleetVisible runs two transports on one Redis, as two processes of
// a fleet: when one gets 429 with Retry-After: 30, it reports the backoff
// event, and the other's Ready, Stats and Check show the pause and the
// doubled pace, read from the shared state. Stats is also what the
// Prometheus sink (module prometheus/) reads for polite_hosts_paused, so
// its count of hosts paused is checked here the way the sink counts, rather
// than by making this module depend on that one.
func TestFleetVisible(t *testing.T) {
	c := newClient(t)
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 2 {
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}))
	defer srv.Close()
	const base = 50 * time.Millisecond
	newPacer := NewPacer(c, WithKeyPrefix(freshPrefix()), FailWhenUnreachable())
	var events []polite.Event
	opts := []polite.Option{polite.WithPacer(newPacer), polite.WithRobotsMode(polite.RobotsOff),
		polite.WithPacing(pace.Policy{BaseDelay: base, LatencyFactor: pace.None, Jitter: pace.None})}
	a := polite.New(nil, append(opts, polite.WithEvents(func(e polite.Event) { events = append(events, e) }))...)
	b := polite.New(nil, opts...)
	get := func(tr *polite.PoliteTransport) int {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL, nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	get(b)
	if got := get(a); got != http.StatusTooManyRequests {
		t.Fatalf("second request: status %d; want 429", got)
	}
	sent := time.Now()

	var backoff *polite.Event
	for i := range events {
		if events[i].Kind == polite.EventBackoff {
			backoff = &events[i]
		}
	}
	if backoff == nil || backoff.Pause < 29*time.Second || backoff.Level != 1 || backoff.Status != 429 {
		t.Errorf("backoff event of the transport that got the 429 = %+v; want level 1 and a pause of 30s", backoff)
	}

	// A read turns the server's remaining time into an instant on this
	// process's clock when its reply comes: up to the read's own time past
	// the end.
	req, _ := http.NewRequest("GET", srv.URL, nil)
	t0 := time.Now()
	ready, err := b.Ready(req)
	if err != nil {
		t.Fatal(err)
	}
	if wait := ready.Next.Sub(sent); wait < 29*time.Second || wait > 30*time.Second+time.Since(t0) {
		t.Errorf("the other transport's Ready: At = +%v; want the Retry-After, 30s", wait)
	}
	d, err := b.Check(req)
	if err != nil {
		t.Fatal(err)
	}
	if d.Pace != 2*base {
		t.Errorf("the other transport's Check: Pace = %v; want %v, doubled by the backoff", d.Pace, 2*base)
	}
	t0 = time.Now()
	stats, err := b.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	read := time.Since(t0)
	if len(stats) != 1 {
		t.Fatalf("the other transport's Stats = %+v; want its one host", stats)
	}
	s := stats[0]
	if until := s.PausedUntil.Sub(sent); until < 29*time.Second || until > 30*time.Second+read ||
		s.Level != 1 || s.Requests != 2 || s.Backoffs != 1 || s.RetryAfters != 1 || s.Pace != 2*base {
		t.Errorf("the other transport's Stats = %+v; want paused for 30s, level 1, 2 requests, 1 backoff with a Retry-After", s)
	}
	paused := 0 // as the Prometheus sink counts polite_hosts_paused
	for _, s := range stats {
		if s.PausedUntil.After(time.Now()) {
			paused++
		}
	}
	if paused != 1 {
		t.Errorf("hosts paused, as the Prometheus sink counts them = %d; want 1", paused)
	}
}
