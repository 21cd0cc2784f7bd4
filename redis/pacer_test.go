package politeredis

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/politetest"
	"github.com/redis/go-redis/v9"
)

// closingPacer closes the client that a test made inside a synctest bubble
// along with its Pacer, and keeps the Pacer's optional interfaces.
type closingPacer struct {
	*pacer
	c *redis.Client
}

func (p closingPacer) Close() error { return p.c.Close() }

var prefixes atomic.Int64

// freshPrefix returns a key prefix no other test uses, so that each test
// starts with no state.
func freshPrefix() string { return fmt.Sprintf("t%d", prefixes.Add(1)) }

func TestConformance(t *testing.T) {
	newClient(t) // skips without a server
	politetest.RunPacer(t, func(policy polite.PacingPolicy) polite.Pacer {
		// Made inside the case's bubble, so that the client's timers and
		// channels belong to it.
		c := redis.NewClient(clientOptions(sock))
		p := NewPacer(c, WithClock(time.Now), WithKeyPrefix(freshPrefix()), FailWhenUnreachable())(policy)
		return closingPacer{p.(*pacer), c}
	})
}

// TestPartitionsBounded checks that a key's state keeps the holds of at
// most 32 quota partitions, dropping the one that ends first, as the
// in-memory pacer does.
func TestPartitionsBounded(t *testing.T) {
	c := newClient(t)
	p := NewPacer(c, WithKeyPrefix(freshPrefix()), FailWhenUnreachable())(polite.PacingPolicy{BaseDelay: polite.None, MaxInFlight: polite.None}.Effective())
	ctx := context.Background()
	for i := range 40 {
		l, err := p.Acquire(ctx, "a", fmt.Sprint(i), 0)
		if err != nil {
			t.Fatal(err)
		}
		l.Release(polite.Outcome{Class: polite.OutcomeSuccess, Quota: polite.Quota{Known: true, Remaining: 0, Reset: time.Duration(i+1) * time.Minute}})
	}
	deadline, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	for i := range 40 {
		_, err := p.Acquire(deadline, "a", fmt.Sprint(i), 0)
		var late *polite.DeadlineError
		if held := errors.As(err, &late); held != (i >= 8) {
			t.Errorf("partition %d: %v; want it held only if among the 32 that end last", i, err)
		}
	}
}
