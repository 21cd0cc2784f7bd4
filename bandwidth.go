package polite

import (
	"context"
	"io"
	"net/http"
	"sync"
	"time"
)

// This file caps the bandwidth of a key's response bodies
// (pace.Policy.MaxBandwidth): a token bucket per key, of bytes, that all
// the key's bodies draw from as they are read.

// burstTime is how much of the rate a key's bucket holds, and so the
// most a body reads at once: a twentieth of a second's worth, which keeps
// the bytes read within 0.5% of the cap over 10 s.
const burstTime = time.Second / 20

// bandwidth holds the buckets of the keys whose bandwidth is capped.
type bandwidth struct {
	max int // soft bound on the buckets kept

	mu      sync.Mutex
	buckets map[string]*bucket
}

func newBandwidth(max int) *bandwidth {
	return &bandwidth{max: max, buckets: make(map[string]*bucket)}
}

// A bucket is one key's allowance of bytes: rate a second, up to burst at
// once. Readers reserve bytes before they read them, and the tokens go
// below zero: a reader waits until its reservation is paid for, so the
// bytes read by time t are at most burst + rate·t, however many bodies
// share the bucket.
type bucket struct {
	mu     sync.Mutex
	rate   float64 // bytes per second
	burst  float64
	tokens float64
	last   time.Time // when tokens was last brought up to date
	open   int       // bodies reading from it; guarded by bandwidth.mu
}

// open returns key's bucket at rate bytes per second, counting a body that
// reads from it until done. When the table is full, it first drops the
// buckets that no body reads from and that are full again, which a new
// bucket would replace as they are.
func (bw *bandwidth) open(key string, rate int64) *bucket {
	bw.mu.Lock()
	defer bw.mu.Unlock()
	b := bw.buckets[key]
	if b == nil {
		if len(bw.buckets) >= bw.max {
			now := time.Now()
			for k, old := range bw.buckets {
				if old.open == 0 && old.full(now) {
					delete(bw.buckets, k)
				}
			}
		}
		b = &bucket{last: time.Now()}
		bw.buckets[key] = b
	}
	b.setRate(rate)
	b.open++
	return b
}

// done says that a body opened on b is closed.
func (bw *bandwidth) done(b *bucket) {
	bw.mu.Lock()
	b.open--
	bw.mu.Unlock()
}

// setRate sets b's rate; a new bucket starts full.
func (b *bucket) setRate(rate int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := float64(rate)
	if r == b.rate {
		return
	}
	fresh := b.rate == 0
	b.rate, b.burst = r, max(r*burstTime.Seconds(), 1)
	if fresh {
		b.tokens = b.burst
	}
	b.tokens = min(b.tokens, b.burst)
}

// refill brings b's tokens up to now. b.mu must be held.
func (b *bucket) refill(now time.Time) {
	if d := now.Sub(b.last); d > 0 {
		b.tokens = min(b.tokens+d.Seconds()*b.rate, b.burst)
		b.last = now
	}
}

// full reports whether b holds its burst at now.
func (b *bucket) full(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(now)
	return b.tokens >= b.burst
}

// reserve takes n bytes from b and returns how long the reader must wait
// before it reads them.
func (b *bucket) reserve(n int) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	b.refill(now)
	b.tokens -= float64(n)
	if b.tokens >= 0 {
		return 0
	}
	return time.Duration(-b.tokens / b.rate * float64(time.Second))
}

// give returns n bytes reserved and not read.
func (b *bucket) give(n int) {
	b.mu.Lock()
	b.tokens = min(b.tokens+float64(n), b.burst)
	b.mu.Unlock()
}

// chunk returns the most a read may take from b at once.
func (b *bucket) chunk() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return int(b.burst)
}

// cappedBody is a response body read no faster than its key's bucket
// allows. It reads into the caller's buffer, as the body does: nothing is
// copied twice.
type cappedBody struct {
	io.ReadCloser
	ctx   context.Context // the request's: a read waits within it
	bw    *bandwidth
	b     *bucket
	timer *time.Timer // made on the first wait, then reused
	once  sync.Once   // closes the body's hold on the bucket
}

// capBody returns resp with its body read through key's bucket at rate
// bytes per second. A response with no body, or whose body is a
// connection taken over (101 Switching Protocols), is left as it is.
func (bw *bandwidth) capBody(ctx context.Context, resp *http.Response, key string, rate int64) {
	if resp.Body == nil || resp.Body == http.NoBody || resp.StatusCode == http.StatusSwitchingProtocols {
		return
	}
	resp.Body = &cappedBody{ReadCloser: resp.Body, ctx: ctx, bw: bw, b: bw.open(key, rate)}
}

// Read reads at most the bytes the bucket holds, reserved before the read
// and given back when fewer come, so that no read goes past the cap.
func (c *cappedBody) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return c.ReadCloser.Read(p)
	}
	n := min(len(p), c.b.chunk())
	if wait := c.b.reserve(n); wait > 0 {
		if c.timer == nil {
			c.timer = time.NewTimer(wait)
		} else {
			c.timer.Reset(wait)
		}
		select {
		case <-c.timer.C:
		case <-c.ctx.Done():
			c.timer.Stop()
			c.b.give(n)
			return 0, c.ctx.Err()
		}
	}
	got, err := c.ReadCloser.Read(p[:n])
	if got < n {
		c.b.give(n - got)
	}
	return got, err
}

// Close closes the body and lets go of the bucket.
func (c *cappedBody) Close() error {
	c.once.Do(func() { c.bw.done(c.b) })
	return c.ReadCloser.Close()
}
