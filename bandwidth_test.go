package polite

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/polite-go/polite/pace"
)

// endless is a body that never ends, each read filling the buffer it is
// given; it remembers the last buffer, to show that nothing is copied
// twice.
type endless struct {
	mu   sync.Mutex
	last []byte
}

func (e *endless) Read(p []byte) (int, error) {
	e.mu.Lock()
	e.last = p
	e.mu.Unlock()
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

func (e *endless) Close() error { return nil }

// endlessSite is a base whose pages are endless bodies, and whose
// robots.txt is a file of n bytes.
func endlessSite(robotsBytes int) *fakeBase {
	return &fakeBase{fn: func(r *http.Request) (*http.Response, error) {
		resp := respond(r, 200, "")
		switch r.URL.Path {
		case "/robots.txt":
			resp.Body = io.NopCloser(io.LimitReader(&endless{}, int64(robotsBytes)))
		case "/empty":
			resp.Body = http.NoBody
		default:
			resp.Body = &endless{}
		}
		return resp, nil
	}}
}

// readFor reads n bodies of rawURL at once through tr for d, and returns
// the bytes each read.
func readFor(t *testing.T, tr *PoliteTransport, rawURL string, n int, d time.Duration) []int64 {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	got := make([]int64, n)
	var wg sync.WaitGroup
	for i := range n {
		req, _ := http.NewRequestWithContext(ctx, "GET", rawURL, nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			defer resp.Body.Close()
			var c counter
			_, err := io.Copy(&c, resp.Body)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("reading: %v; want context.Canceled", err)
			}
			atomic.StoreInt64(&got[i], c.n.Load())
		})
	}
	time.Sleep(d)
	cancel()
	wg.Wait()
	return got
}

// counter is a Writer that counts what it is given.
type counter struct{ n atomic.Int64 }

func (c *counter) Write(p []byte) (int, error) {
	c.n.Add(int64(len(p)))
	return len(p), nil
}

func sum(xs []int64) (s int64) {
	for _, x := range xs {
		s += x
	}
	return s
}

// TestBandwidthCap checks, on the fake clock, that the bytes read from a
// key's bodies over 10 s stay within 1% of the cap, one body or many at
// once, that keys have their own allowance, and that a rule can set a cap
// or lift the transport's.
func TestBandwidthCap(t *testing.T) {
	const rate = 20_000 // bytes a second
	for _, c := range []struct {
		name   string
		opts   []Option
		url    string
		bodies int
		want   int64 // bytes over 10 s; 0: not capped
	}{
		{"one body", []Option{WithPacing(pace.Policy{MaxBandwidth: rate})}, "http://a.example/", 1, 10 * rate},
		{"four bodies share the cap", []Option{WithPacing(pace.Policy{MaxBandwidth: rate, MaxInFlight: pace.None})}, "http://a.example/", 4, 10 * rate},
		{"a rule's cap", []Option{WithPacingRules(PacingRule{Domain: "a.example", Policy: pace.Policy{MaxBandwidth: rate / 4}})}, "http://www.a.example/", 1, 10 * rate / 4},
		{"a rule lifts the cap", []Option{WithPacing(pace.Policy{MaxBandwidth: rate}), WithPacingRules(PacingRule{Host: "a.example", Policy: pace.Policy{MaxBandwidth: pace.None}})}, "http://a.example/", 1, 0},
		{"a host no rule caps", []Option{WithPacingRules(PacingRule{Domain: "a.example", Policy: pace.Policy{MaxBandwidth: rate}})}, "http://b.example/", 1, 0},
		{"a func's cap", []Option{WithPacingFunc(func(key string) (pace.Policy, bool) {
			return pace.Policy{MaxBandwidth: 2 * rate}, key == "a.example"
		})}, "http://a.example/", 1, 20 * rate},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				opts := append([]Option{WithPacing(pace.Policy{BaseDelay: pace.None, Jitter: pace.None, LatencyFactor: pace.None}), WithRobotsMode(RobotsOff)}, c.opts...)
				tr := New(endlessSite(0), opts...)
				req, _ := http.NewRequest("GET", c.url, nil)
				resp, err := tr.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				_, capped := resp.Body.(*cappedBody)
				resp.Body.Close()
				if capped != (c.want > 0) {
					t.Fatalf("body capped: %v; want %v", capped, c.want > 0)
				}
				if c.want == 0 {
					return
				}
				got := readFor(t, tr, c.url, c.bodies, 10*time.Second)
				s := sum(got)
				if s < c.want || float64(s) > 1.01*float64(c.want) {
					t.Errorf("%d bytes over 10 s (%v); want %d, within 1%%", s, got, c.want)
				}
				t.Logf("%d bodies read %d bytes over 10 s: %.4f of the cap", c.bodies, s, float64(s)/float64(c.want))
				if c.bodies > 1 {
					for i, n := range got {
						if n < c.want/int64(c.bodies)/2 {
							t.Errorf("body %d read %d bytes of %v: starved", i, n, got)
						}
					}
				}
			})
		})
	}
}

// TestBandwidthKeys checks that two keys read at their caps at once, each
// from its own allowance, and that a key's bodies wait for one another
// across requests: a body opened after another read the allowance waits
// for it.
func TestBandwidthKeys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := New(endlessSite(0), WithPacing(pace.Policy{BaseDelay: pace.None, Jitter: pace.None, MaxBandwidth: 10_000}), WithRobotsMode(RobotsOff))
		var a, b []int64
		var wg sync.WaitGroup
		wg.Go(func() { a = readFor(t, tr, "http://a.example/", 1, 10*time.Second) })
		wg.Go(func() { b = readFor(t, tr, "http://b.example/", 1, 10*time.Second) })
		wg.Wait()
		for name, got := range map[string][]int64{"a": a, "b": b} {
			if s := sum(got); s < 100_000 || s > 101_000 {
				t.Errorf("key %s read %d bytes over 10 s; want 100,000 within 1%%", name, s)
			}
		}
	})
}

// TestBandwidthBody checks what the capped body does besides: it reads
// into the caller's buffer, fails with the context's error when its
// request's context ends while it waits, leaves bodies of no bytes and
// robots.txt alone, and lets go of its bucket when closed.
func TestBandwidthBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := endlessSite(40_000)
		tr := New(base, WithPacing(pace.Policy{BaseDelay: pace.None, Jitter: pace.None, MaxBandwidth: 1000}))
		start := time.Now()
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://a.example/page", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("robots.txt of 40,000 bytes took %v under a cap of 1000 bytes a second; want it not capped", d)
		}
		buf := make([]byte, 4096)
		n, err := resp.Body.Read(buf)
		if n != 50 || err != nil {
			t.Errorf("first read: %d, %v; want 50 bytes, the burst", n, err)
		}
		if body := resp.Body.(*cappedBody).ReadCloser.(*endless); &body.last[0] != &buf[0] {
			t.Errorf("the body read into another buffer than the caller's")
		}
		go func() {
			time.Sleep(10 * time.Millisecond)
			cancel()
		}()
		if n, err := resp.Body.Read(buf); n != 0 || !errors.Is(err, context.Canceled) {
			t.Errorf("read as the context ends: %d, %v; want 0, context.Canceled", n, err)
		}
		if time.Since(start) != 10*time.Millisecond {
			t.Errorf("the read returned after %v; want 10ms, when the context ended", time.Since(start))
		}
		resp.Body.Close()
		resp.Body.Close()
		if b := tr.bandwidth.buckets["a.example"]; b.open != 0 {
			t.Errorf("%d bodies open after Close; want 0", b.open)
		}
		resp, err = get(tr, "http://a.example/empty", "")
		if err != nil {
			t.Fatal(err)
		}
		if resp.Body != http.NoBody {
			t.Errorf("an empty body was wrapped")
		}
	})
}

// TestBandwidthBound checks that the buckets of keys no body reads from
// are dropped past MaxKeys once they are full again.
func TestBandwidthBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := New(endlessSite(0), WithPacing(pace.Policy{BaseDelay: pace.None, Jitter: pace.None, MaxBandwidth: 1000}),
			WithRobotsMode(RobotsOff), WithLimits(Limits{MaxKeys: 4}))
		for i := range 20 {
			resp, err := get(tr, "http://h"+string(rune('a'+i))+".example/", "")
			if err != nil {
				t.Fatal(err)
			}
			io.CopyN(io.Discard, resp.Body, 100)
			resp.Body.Close()
			time.Sleep(time.Second)
		}
		if n := len(tr.bandwidth.buckets); n > 5 {
			t.Errorf("%d buckets kept; want 5 at most", n)
		}
	})
}

// BenchmarkBandwidthCap reads four bodies of one key at once from a
// server on loopback for 10 s of the wall clock, under a cap of 1 MB/s,
// and reports the bytes read as a share of the cap: run it with
// -benchtime 1x.
func BenchmarkBandwidthCap(b *testing.B) {
	const rate, bodies, window = 1_000_000, 4, 10 * time.Second
	chunk := bytes.Repeat([]byte("x"), 32<<10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	for b.Loop() {
		tr := New(nil, WithPacing(pace.Policy{BaseDelay: pace.None, Jitter: pace.None, MaxInFlight: pace.None, MaxBandwidth: rate}), WithRobotsMode(RobotsOff))
		ctx, cancel := context.WithCancel(context.Background())
		var total atomic.Int64
		var wg sync.WaitGroup
		start := time.Now()
		for range bodies {
			req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/stream", nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				b.Fatal(err)
			}
			wg.Go(func() {
				defer resp.Body.Close()
				buf := make([]byte, 32<<10)
				for {
					n, err := resp.Body.Read(buf)
					if time.Since(start) <= window {
						total.Add(int64(n))
					}
					if err != nil {
						return
					}
				}
			})
		}
		time.Sleep(window)
		cancel()
		wg.Wait()
		tr.CloseIdleConnections()
		b.ReportMetric(float64(total.Load())/(rate*window.Seconds()), "share-of-cap")
	}
}
