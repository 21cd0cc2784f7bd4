package politeredis

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/pace"
	"github.com/redis/go-redis/v9"
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

	// A third process, which sent nothing, lists the host from the
	// fleet's index of keys, which the 429's release wrote.
	stats, err = polite.New(nil, opts...).Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(stats) != 1 {
		t.Fatalf("the Stats of a transport that sent nothing = %+v; want the fleet's host", stats)
	}
	if s := stats[0]; len(stats) != 1 || s.PausedUntil.Sub(sent) < 29*time.Second || s.Requests != 2 {
		t.Errorf("the Stats of a transport that sent nothing = %+v; want the fleet's host, paused for 30s, 2 requests", stats)
	}
}

// TestStatsListsTheFleetsKeys runs two Pacers on one Redis, as two
// processes: one starts requests on more keys than Stats lists and pauses
// the last of them; the other, which started none, lists in its Stats the
// keys the fleet used last, the pause among them.
func TestStatsListsTheFleetsKeys(t *testing.T) {
	c := newClient(t)
	prefix := freshPrefix()
	newPacer := NewPacer(c, WithKeyPrefix(prefix), FailWhenUnreachable())
	a := newPacer(pace.Config{Policy: unpaced()}).(*pacer)
	b := newPacer(pace.Config{Policy: unpaced()}).(*pacer)
	ctx := context.Background()
	const keys = statsKeys + 200
	key := func(i int) string { return "host" + strconv.Itoa(i) + ".example" }
	for i := range keys {
		l, err := a.Acquire(ctx, pace.Request{Key: key(i)})
		if err != nil {
			t.Fatal(err)
		}
		o := pace.Outcome{Class: pace.Success}
		if i == keys-1 {
			o = pace.Outcome{Class: pace.Signal, RetryAfter: 30 * time.Second}
		}
		a.Release(l, o)
	}
	// The signal of the last release wrote the index.
	if n := c.ZCard(ctx, prefix+":keys").Val(); n != keys {
		t.Fatalf("the fleet's index holds %d keys after a signal; want %d", n, keys)
	}
	stats, err := b.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(stats) != statsKeys {
		t.Fatalf("Stats of a process that used no key lists %d keys; want the %d the fleet used last", len(stats), statsKeys)
	}
	listed := map[string]pace.KeyState{}
	for _, s := range stats {
		listed[s.Key] = s
	}
	for _, i := range []int{0, 199} {
		if _, ok := listed[key(i)]; ok {
			t.Errorf("Stats lists %s, one of the %d used first; want only the %d used last", key(i), keys-statsKeys, statsKeys)
		}
	}
	last, ok := listed[key(keys-1)]
	if !ok || time.Until(last.PausedUntil) < 29*time.Second || last.Requests != 1 || last.RetryAfters != 1 {
		t.Errorf("Stats of the key the fleet paused = %+v (listed %v); want paused for 30s, 1 request, 1 Retry-After", last, ok)
	}
}

// TestFleetIndexIsBounded writes more keys to the fleet's index than it
// keeps, and finds the ones written last kept.
func TestFleetIndexIsBounded(t *testing.T) {
	c := newClient(t)
	prefix := freshPrefix()
	p := NewPacer(c, WithKeyPrefix(prefix), FailWhenUnreachable())(pace.Config{Policy: unpaced()}).(*pacer)
	batch := map[string]int64{}
	now := time.Now().UnixMicro()
	for i := range registryKeys + 50 {
		batch["host"+strconv.Itoa(i)] = now - int64(registryKeys+50-i)
	}
	batch["stale"] = now - (forgetAfter + time.Minute).Microseconds()
	ctx := context.Background()
	p.reg.pending = batch
	p.reg.write(ctx, true)
	if n := c.ZCard(ctx, prefix+":keys").Val(); n != registryKeys {
		t.Errorf("the index holds %d keys; want %d", n, registryKeys)
	}
	for key, want := range map[string]bool{"host0": false, "host49": false, "host50": true, "stale": false, "host10049": true} {
		_, err := c.ZScore(ctx, prefix+":keys", key).Result()
		if got := err == nil; got != want {
			t.Errorf("the index holds %s: %v; want %v", key, got, want)
		}
	}
	if ttl := c.PTTL(ctx, prefix+":keys").Val(); ttl <= 0 || ttl > forgetAfter+p.policies.Policy.MaxCrawlDelay {
		t.Errorf("the index expires in %v; want at most %v, as the keys' state", ttl, forgetAfter+p.policies.Policy.MaxCrawlDelay)
	}
}

// TestFleetIndexIsWrittenEverySecond follows one process's writes to the
// fleet's index in a bubble's time: the first release writes its key at
// once, the next ones wait until a second has passed since, and a
// signal's release writes at once.
func TestFleetIndexIsWrittenEverySecond(t *testing.T) {
	newClient(t) // skips without a server
	synctest.Test(t, func(t *testing.T) {
		c := redis.NewClient(clientOptions(sock))
		defer c.Close()
		prefix := freshPrefix()
		p := NewPacer(c, WithClock(time.Now), WithKeyPrefix(prefix), FailWhenUnreachable())(pace.Config{Policy: unpaced()}).(*pacer)
		ctx := context.Background()
		step := func(key string, class pace.Class, want int64) {
			t.Helper()
			l, err := p.Acquire(ctx, pace.Request{Key: key})
			if err != nil {
				t.Fatal(err)
			}
			p.Release(l, pace.Outcome{Class: class})
			if n := c.ZCard(ctx, prefix+":keys").Val(); n != want {
				t.Errorf("after %s: the index holds %d keys; want %d", key, n, want)
			}
		}
		step("a", pace.Success, 1) // the first write
		step("b", pace.Success, 1)
		step("c", pace.Success, 1)
		time.Sleep(registryEvery)
		step("d", pace.Success, 4) // a second on: b, c and d
		step("e", pace.Signal, 5)  // at once
		step("f", pace.Success, 5)
	})
}
