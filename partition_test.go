package polite

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"testing/synctest"
	"time"
)

// Quota partitions: a rate-limit quota holds only the requests of the
// partition whose responses reported it, in the pacer and through the
// transport.

// partitioned is an Outcome whose response said the quota of the
// server's partition resource has remaining requests of limit left until
// reset.
func partitioned(resource string, remaining, limit int64, reset time.Duration) Outcome {
	return Outcome{Class: OutcomeSuccess, Quota: Quota{Known: true, Remaining: remaining, Limit: limit, Reset: reset, Partition: resource}}
}

// acquirePart acquires a request of partition to key in a new goroutine,
// and waits until it is admitted or blocked.
func acquirePart(ctx context.Context, p *memoryPacer, key, partition string) <-chan admission {
	ch := make(chan admission, 1)
	go func() {
		tk, err := p.acquire(ctx, key, partition, 0)
		ch <- admission{tk, err, time.Now()}
	}()
	synctest.Wait()
	return ch
}

func TestPartitionHolds(t *testing.T) {
	const s = time.Second
	tests := []struct {
		name    string
		first   string  // partition of the request whose response reports o
		o       Outcome // what it reports
		then    string  // partition of the next request
		wantGap time.Duration
	}{
		{"exhausted quota holds its partition", "A", partitioned("", 0, 0, 6*s), "A", 6 * s},
		{"exhausted quota holds no other partition", "A", partitioned("", 0, 0, 6*s), "B", 0},
		{"low quota spreads its partition", "A", partitioned("", 2, 100, 10*s), "A", 5 * s},
		{"low quota spreads no other partition", "A", partitioned("", 2, 100, 10*s), "B", 0},
		{"a named resource holds its request partition", "", partitioned("search", 0, 0, 9*s), "", 9 * s},
		{"a named resource holds no other request partition", "search", partitioned("search", 0, 0, 9*s), "core", 0},
		{"a signal holds every partition", "A", Outcome{Class: OutcomeSignal, RetryAfter: 30 * s}, "B", 30 * s},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := newTestPacer(0, withBaseDelay(0), withInFlight(100), func(c *pacerConfig) { c.policy.latencyFactor = 0 })
				tk, err := p.acquire(context.Background(), pacerKey, tt.first, 0)
				if err != nil {
					t.Fatal(err)
				}
				p.observe(tk, tt.first, tt.o)
				t0 := time.Now()
				if _, err := p.acquire(context.Background(), pacerKey, tt.then, 0); err != nil {
					t.Fatal(err)
				}
				if got := time.Since(t0); got != tt.wantGap {
					t.Errorf("next start %v after the response; want %v", got, tt.wantGap)
				}
			})
		})
	}
}

// TestPartitionNoHeadOfLine checks that a request held by its partition's
// quota waits outside the key's queue: a request of another partition
// that comes after it starts at once, with one slot in flight as with
// many.
func TestPartitionNoHeadOfLine(t *testing.T) {
	for _, inFlight := range []int{1, 8} {
		t.Run(fmt.Sprintf("MaxInFlight %d", inFlight), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := newTestPacer(0, withBaseDelay(0), withInFlight(inFlight), func(c *pacerConfig) { c.policy.latencyFactor = 0 })
				tk, _ := p.acquire(context.Background(), pacerKey, "A", 0)
				p.observe(tk, "A", partitioned("", 0, 0, 6*time.Second))
				t0 := time.Now()
				a := acquirePart(context.Background(), p, pacerKey, "A")
				pending(t, a, "A while its quota is exhausted")
				b := acquirePart(context.Background(), p, pacerKey, "B")
				got := <-b
				if got.err != nil || got.at.Sub(t0) != 0 {
					t.Fatalf("B: %v at +%v; want it started at once", got.err, got.at.Sub(t0))
				}
				p.observe(got.t, "B", outSuccess)
				if got := <-a; got.err != nil || got.at.Sub(t0) != 6*time.Second {
					t.Errorf("A: %v at +%v; want it started at the reset, +6s", got.err, got.at.Sub(t0))
				}
			})
		})
	}
}

// TestPartitionDeadline checks that a request whose partition is held past
// its deadline fails at once with a *DeadlineError, and that a request of
// another partition with the same deadline does not.
func TestPartitionDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newTestPacer(0, withBaseDelay(0), withInFlight(8), func(c *pacerConfig) { c.policy.latencyFactor = 0 })
		tk, _ := p.acquire(context.Background(), pacerKey, "A", 0)
		p.observe(tk, "A", partitioned("", 0, 0, 6*time.Second))
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		var de *DeadlineError
		if _, err := p.acquire(ctx, pacerKey, "A", 0); !errors.As(err, &de) {
			t.Errorf("A: %v; want a *DeadlineError", err)
		}
		if _, err := p.acquire(ctx, pacerKey, "B", 0); err != nil {
			t.Errorf("B: %v; want a start", err)
		}
	})
}

// TestPartitionsBounded checks that a key keeps at most maxPartitions
// holds, dropping the one that ends first, and that a key whose partition
// is held is not forgotten.
func TestPartitionsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newTestPacer(0, withBaseDelay(0), withInFlight(1000), func(c *pacerConfig) { c.policy.latencyFactor = 0 })
		for i := range 2 * maxPartitions {
			tk, _ := p.acquire(context.Background(), pacerKey, fmt.Sprint(i), 0)
			p.observe(tk, fmt.Sprint(i), partitioned("", 0, 0, time.Duration(i+1)*time.Minute))
		}
		h := p.lookup(pacerKey)
		h.mu.Lock()
		n := len(h.pace.quotas)
		first := h.pace.quotas[0].partition
		h.mu.Unlock()
		if n != maxPartitions || first != fmt.Sprint(maxPartitions) {
			t.Errorf("%d holds, the first of %q; want %d, from %q: the ones that end last", n, first, maxPartitions, fmt.Sprint(maxPartitions))
		}
		if p.cfg.policy.startable(&h.pace, p.clock.now()) {
			t.Error("a key whose partitions are held is startable: it would be forgotten")
		}
		time.Sleep(2 * maxPartitions * time.Minute)
		if !p.cfg.policy.startable(&h.pace, p.clock.now()) {
			t.Error("a key whose holds are over is not startable")
		}
	})
}

// TestQuotaPartitionTransport checks WithQuotaPartition through the
// transport: the exhausted quota of one API token holds that token's
// calls, not another's, and a request's Change reports its partition's
// pause.
func TestQuotaPartitionTransport(t *testing.T) {
	for _, partitioned := range []bool{false, true} {
		t.Run(fmt.Sprintf("partitioned %v", partitioned), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := &fakeBase{fn: func(r *http.Request) (*http.Response, error) {
					if r.Header.Get("Authorization") == "token A" {
						return respond(r, 200, "ok", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "6"), nil
					}
					return respond(r, 200, "ok", "X-RateLimit-Remaining", "4999", "X-RateLimit-Reset", "6"), nil
				}}
				opts := []Option{APIDefaults()}
				if partitioned {
					opts = append(opts, WithQuotaPartition(QuotaPartitionCredentials))
				}
				tr := New(base, opts...)
				call := func(token string) time.Duration {
					req, _ := http.NewRequest("GET", "http://api.example/user", nil)
					req.Header.Set("Authorization", token)
					t0 := time.Now()
					resp, err := tr.RoundTrip(req)
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					return time.Since(t0)
				}
				call("token A")
				wantB := 6 * time.Second
				if partitioned {
					wantB = 0
				}
				if got := call("token B"); got != wantB {
					t.Errorf("token B waited %v after token A's quota ran out; want %v", got, wantB)
				}
			})
		})
	}
}

func TestQuotaPartitionCredentials(t *testing.T) {
	req := func(headers ...string) *http.Request {
		r, _ := http.NewRequest("GET", "http://h/", nil)
		for i := 0; i < len(headers); i += 2 {
			r.Header.Set(headers[i], headers[i+1])
		}
		return r
	}
	sigv4 := func(key, sig string) string {
		return "AWS4-HMAC-SHA256 Credential=" + key + "/20260504/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=" + sig
	}
	a := QuotaPartitionCredentials(req("Authorization", "Bearer A"))
	tests := []struct {
		name string
		r    *http.Request
		same bool // as a
	}{
		{"same token", req("Authorization", "Bearer A"), true},
		{"another token", req("Authorization", "Bearer B"), false},
		{"an API key header", req("X-Api-Key", "Bearer A"), false},
	}
	for _, tt := range tests {
		if got := QuotaPartitionCredentials(tt.r); (got == a) != tt.same || got == "" {
			t.Errorf("%s: %q, %q; want same %v, not empty", tt.name, got, a, tt.same)
		}
	}
	if got := QuotaPartitionCredentials(req()); got != "" {
		t.Errorf("no credentials: %q; want the partition \"\"", got)
	}
	if QuotaPartitionCredentials(req("Authorization", sigv4("AKID1", "aaa"))) != QuotaPartitionCredentials(req("Authorization", sigv4("AKID1", "bbb"))) ||
		QuotaPartitionCredentials(req("Authorization", sigv4("AKID1", "aaa"))) == QuotaPartitionCredentials(req("Authorization", sigv4("AKID2", "aaa"))) {
		t.Error("SigV4: want one partition per access key, whatever the signature")
	}
}

// TestRecoverAfter checks the successes that lower the backoff level: five
// by default, one with APIDefaults, never with None.
func TestRecoverAfter(t *testing.T) {
	tests := []struct {
		name         string
		recoverAfter int
		successes    int
		wantLevel    int
	}{
		{"default, four", 0, 4, 1},
		{"default, five", 0, 5, 0},
		{"one", 1, 1, 0},
		{"None", None, 50, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				policy := PacingPolicy{RecoverAfter: tt.recoverAfter}.Effective()
				p := newTestPacer(0, func(c *pacerConfig) { c.policy.recoverAfter = policy.delayPolicy().recoverAfter })
				request(t, p, pacerKey, 0, 0, outSignal)
				for range tt.successes {
					request(t, p, pacerKey, 0, 0, outSuccess)
				}
				if got := stateOf(t, p, pacerKey).Level; got != tt.wantLevel {
					t.Errorf("level %d; want %d", got, tt.wantLevel)
				}
			})
		})
	}
}
