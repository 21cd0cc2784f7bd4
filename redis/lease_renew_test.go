package politeredis

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/polite-go/polite/pace"
	"github.com/redis/go-redis/v9"
)

// TestLeaseRenewed checks the keep-alive of the leases of requests in
// flight, on the bubble's clock: a request that runs six times its lease
// keeps its key's only slot, which another process gets when it is
// released; and a process that stops renewing, as a dead one does, frees
// the slot one lease after its last renewal.
func TestLeaseRenewed(t *testing.T) {
	newClient(t) // skips without a server
	synctest.Test(t, func(t *testing.T) {
		c := redis.NewClient(clientOptions(sock))
		defer c.Close()
		const leaseFor = 10 * time.Second
		policy := pace.Policy{BaseDelay: pace.None, LatencyFactor: pace.None, Jitter: pace.None, MaxInFlight: 1}
		opts := []PacerOption{WithClock(time.Now), WithKeyPrefix(freshPrefix()), FailWhenUnreachable(), WithLeaseDuration(leaseFor)}
		a := NewPacer(c, opts...)(pace.Config{Policy: policy}).(*pacer)
		b := NewPacer(c, opts...)(pace.Config{Policy: policy}).(*pacer)
		ctx := context.Background()
		poll := b.o.poll // b sees a slot that another process freed at its next look

		// b's request waits for a's, which runs a minute.
		t0 := time.Now()
		la, err := a.Acquire(ctx, pace.Request{Key: "k"})
		if err != nil {
			t.Fatal(err)
		}
		time.AfterFunc(time.Minute, func() { a.Release(la, pace.Outcome{Class: pace.Success}) })
		lb, err := b.Acquire(ctx, pace.Request{Key: "k"})
		if err != nil {
			t.Fatal(err)
		}
		if got := time.Since(t0); got < time.Minute || got > time.Minute+poll {
			t.Errorf("b started +%v after a, whose request ran 1m0s on a lease of %v; want when a released it, +1m0s", got, leaseFor)
		}
		b.Release(lb, pace.Outcome{Class: pace.Success})

		// a takes the slot and dies at once: b starts when the lease runs out.
		t1 := time.Now()
		la, err = a.Acquire(ctx, pace.Request{Key: "k"})
		if err != nil {
			t.Fatal(err)
		}
		a.keep.drop(leaseRef{"k", la.Ref.(*lease).id})
		lb, err = b.Acquire(ctx, pace.Request{Key: "k"})
		if err != nil {
			t.Fatal(err)
		}
		if got := time.Since(t1); got < leaseFor || got > leaseFor+poll {
			t.Errorf("b started +%v after a died holding the slot; want when its lease ran out, +%v", got, leaseFor)
		}
		b.Release(lb, pace.Outcome{Class: pace.Success})
	})
}
