package polite

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/polite-go/polite/pace"
)

// leakyLimit is a server's rate limit as nginx's limit_req keeps it
// (ngx_http_limit_req_module.c, with nodelay): an excess of requests that
// drains at rate a second, 0 after a client's first request and one more
// at each request after it, less what drained since the last one taken; a
// request is refused with 429 (and no Retry-After) when that excess would
// be above burst. With burst 0, no request comes sooner than 1/rate after
// the one before; with burst 1, requests a gap g apart are taken about
// 1/(1−g·rate) times in a row before one is refused.
type leakyLimit struct {
	rate  float64 // requests a second
	burst float64

	mu      sync.Mutex // guards the fields below
	excess  float64
	last    time.Time
	taken   int
	refused int
}

func (l *leakyLimit) admit(now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := 0.0
	if !l.last.IsZero() {
		e = max(0, l.excess-l.rate*now.Sub(l.last).Seconds()+1)
	}
	if e > l.burst+1e-9 {
		l.refused++
		return false
	}
	l.excess, l.last = e, now
	l.taken++
	return true
}

// TestUnstatedLimitIsLearned crawls, in the bubble's clock, a host whose
// server allows one request each 3 seconds without saying so (nginx's
// limit_req rate=20r/m, without a burst and with burst=1 nodelay, 429
// without Retry-After) while its robots.txt asks for a Crawl-delay of 1
// second: with 1, 4 and 16 callers, over 5 minutes, 15 and an hour, a
// handful of 429s, not one per recovery from backoff, and the host kept at
// 0.75 of its limit or more.
func TestUnstatedLimitIsLearned(t *testing.T) {
	for _, burst := range []float64{0, 1} {
		for _, d := range []time.Duration{5 * time.Minute, 15 * time.Minute, time.Hour} {
			for _, callers := range []int{1, 4, 16} {
				t.Run(fmt.Sprintf("burst %v, %v, %d callers", burst, d, callers), func(t *testing.T) {
					synctest.Test(t, func(t *testing.T) {
						limit := &leakyLimit{rate: 1.0 / 3, burst: burst}
						base := &fakeBase{fn: func(r *http.Request) (*http.Response, error) {
							if r.URL.Path == "/robots.txt" {
								return respond(r, 200, "User-agent: *\nCrawl-delay: 1\n"), nil
							}
							if !limit.admit(time.Now()) {
								return respond(r, 429, "slow down"), nil
							}
							return respond(r, 200, "page"), nil
						}}
						tr := New(base)
						ctx, cancel := context.WithTimeout(context.Background(), d)
						defer cancel()
						var wg sync.WaitGroup
						for range callers {
							wg.Go(func() {
								for {
									req, _ := http.NewRequestWithContext(ctx, "GET", "http://h/page", nil)
									resp, err := tr.RoundTrip(req)
									if err != nil {
										return // the crawl's end: a start past it fails at once
									}
									resp.Body.Close()
								}
							})
						}
						wg.Wait()
						limit.mu.Lock()
						defer limit.mu.Unlock()
						most := int(d / (3 * time.Second))
						// The search costs a few 429s, and each probe of a
						// faster pace one, the probes further and further
						// apart: over 20 runs, medians of 3 and 4 in 5 minutes,
						// 4 and 6 in 15, 6 and 7.5 in an hour, without a burst
						// and with one.
						mostRefused := 6 + int(d/(5*time.Minute))
						if limit.refused > mostRefused || float64(limit.taken) < 0.75*float64(most) {
							t.Errorf("%d taken, %d refused with 429; want at least %d taken, 0.75 of the limit, and at most %d refused", limit.taken, limit.refused, int(0.75*float64(most)), mostRefused)
						}
						t.Logf("%d taken (%.2f of the limit), %d refused", limit.taken, float64(limit.taken)/float64(most), limit.refused)
					})
				})
			}
		}
	}
}

// TestUnstatedLimitMoves checks that what 429s taught is not kept against
// the server: a limit that loosens is found again by the probes, and one
// that tightens at the next 429.
func TestUnstatedLimitMoves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		limit := &leakyLimit{rate: 1.0 / 3, burst: 1}
		base := &fakeBase{fn: func(r *http.Request) (*http.Response, error) {
			if !limit.admit(time.Now()) {
				return respond(r, 429, ""), nil
			}
			return respond(r, 200, ""), nil
		}}
		tr := New(base, WithRobotsMode(RobotsOff), WithPacing(pace.Policy{Jitter: pace.None}))
		crawl := func(d time.Duration) (taken, refused int) {
			limit.mu.Lock()
			t0, r0 := limit.taken, limit.refused
			limit.mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), d)
			defer cancel()
			for {
				req, _ := http.NewRequestWithContext(ctx, "GET", "http://h/page", nil)
				resp, err := tr.RoundTrip(req)
				if err != nil {
					break // the crawl's end: a start past it fails at once
				}
				resp.Body.Close()
			}
			limit.mu.Lock()
			defer limit.mu.Unlock()
			return limit.taken - t0, limit.refused - r0
		}
		crawl(10 * time.Minute) // learns 3s
		limit.mu.Lock()
		limit.rate = 1.0 / 1.5 // loosens to one each 1.5s
		limit.mu.Unlock()
		crawl(20 * time.Minute) // the probes find it
		if taken, _ := crawl(5 * time.Minute); taken < 150 {
			t.Errorf("after the limit loosened to one each 1.5s: %d taken in 5 minutes; want 150 or more, above the old limit's 100", taken)
		}
		limit.mu.Lock()
		limit.rate = 1.0 / 4 // tightens to one each 4s
		limit.mu.Unlock()
		crawl(5 * time.Minute)
		if taken, refused := crawl(5 * time.Minute); refused > 2 || taken < 60 {
			t.Errorf("after the limit tightened to one each 4s: %d taken, %d refused in 5 minutes; want 60 or more and at most 2", taken, refused)
		}
	})
}

// windowQuota is a server's quota as an API states it on every answer:
// limit calls in each window, X-RateLimit-Limit, -Remaining and -Reset
// (seconds to the window's end), a 429 past it.
type windowQuota struct {
	limit  int
	window time.Duration
	t0     time.Time

	mu      sync.Mutex // guards the fields below
	n       int        // calls in the window that ends at end
	end     time.Time
	taken   int
	refused int
}

func (q *windowQuota) answer(r *http.Request) *http.Response {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := time.Now()
	if !now.Before(q.end) {
		q.end = q.t0.Add((now.Sub(q.t0)/q.window + 1) * q.window)
		q.n = 0
	}
	status := 200
	if q.n >= q.limit {
		status = 429
		q.refused++
	} else {
		q.n++
		q.taken++
	}
	reset := strconv.FormatFloat(q.end.Sub(now).Seconds(), 'f', 3, 64)
	return respond(r, status, "", "X-RateLimit-Limit", strconv.Itoa(q.limit),
		"X-RateLimit-Remaining", strconv.Itoa(q.limit-q.n), "X-RateLimit-Reset", reset)
}

// TestStatedQuotaIsSpent checks that callers who start together spend the
// quota a server stated: after one call taught it (5 calls each 2
// seconds), 1, 4 and 16 callers make 24 calls at once through
// APIDefaults, and none draws a 429, and all are done within the windows
// that 24 calls need.
func TestStatedQuotaIsSpent(t *testing.T) {
	for _, callers := range []int{1, 4, 16} {
		t.Run(fmt.Sprint(callers, " callers"), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := &windowQuota{limit: 5, window: 2 * time.Second, t0: time.Now()}
				tr := New(roundTripFunc(func(r *http.Request) (*http.Response, error) { return q.answer(r), nil }), APIDefaults())
				call := func() {
					resp, err := get(tr, "http://api/v1", "")
					if err != nil {
						t.Error(err)
						return
					}
					resp.Body.Close()
				}
				call() // teaches the quota
				t0 := time.Now()
				const calls = 24
				var wg sync.WaitGroup
				for i := range callers {
					n := calls / callers
					if i < calls%callers {
						n++
					}
					wg.Go(func() {
						for range n {
							call()
						}
					})
				}
				wg.Wait()
				q.mu.Lock()
				defer q.mu.Unlock()
				if q.refused != 0 || q.taken != calls+1 {
					t.Errorf("%d calls taken, %d refused with 429; want %d and none", q.taken, q.refused, calls+1)
				}
				// 4 more in the first window, then 5 in each: 24 calls end in the sixth.
				if took := time.Since(t0); took > 10*time.Second {
					t.Errorf("the calls took %v; want them done within 10s, five windows", took)
				}
			})
		})
	}
}
