package politeredis

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/polite-go/polite/pace"
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
	politetest.RunPacer(t, func(ps pace.Config) pace.Pacer {
		// Made inside the case's bubble, so that the client's timers and
		// channels belong to it.
		c := redis.NewClient(clientOptions(sock))
		p := NewPacer(c, WithClock(time.Now), WithKeyPrefix(freshPrefix()), FailWhenUnreachable())(ps)
		return closingPacer{p.(*pacer), c}
	})
}

// TestPartitionsBounded checks that a key's state keeps the holds of at
// most 32 quota partitions, dropping the one that ends first, as the
// in-memory pacer does.
func TestPartitionsBounded(t *testing.T) {
	c := newClient(t)
	p := NewPacer(c, WithKeyPrefix(freshPrefix()), FailWhenUnreachable())(pace.Config{Policy: pace.Policy{BaseDelay: pace.None, MaxInFlight: pace.None}.Effective()})
	ctx := context.Background()
	for i := range 40 {
		l, err := p.Acquire(ctx, pace.Request{Key: "a", Partition: fmt.Sprint(i)})
		if err != nil {
			t.Fatal(err)
		}
		p.Release(l, pace.Outcome{Class: pace.Success, Quota: pace.Quota{Known: true, Remaining: 0, Reset: time.Duration(i+1) * time.Minute}})
	}
	deadline, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	for i := range 40 {
		_, err := p.Acquire(deadline, pace.Request{Key: "a", Partition: fmt.Sprint(i)})
		var late *pace.DeadlineError
		if held := errors.As(err, &late); held != (i >= 8) {
			t.Errorf("partition %d: %v; want it held only if among the 32 that end last", i, err)
		}
	}
}

// TestPartitionNamedAsMark checks that a quota partition whose name is
// the mark that ends a key's own policy is read as a partition, in the
// calls of a key with its own policy and of one without.
func TestPartitionNamedAsMark(t *testing.T) {
	c := newClient(t)
	ps := pace.Config{
		Policy: pace.Policy{BaseDelay: pace.None, LatencyFactor: pace.None, Jitter: pace.None, MaxInFlight: pace.None}.Effective(),
		Override: func(key string) (pace.Policy, bool) {
			return pace.Policy{BaseDelay: time.Hour}, key == "own"
		},
	}
	p := NewPacer(c, WithKeyPrefix(freshPrefix()), FailWhenUnreachable())(ps).(pace.ReadyPacer)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	const mark = ownPolicyMark
	for _, c := range []struct {
		key             string
		inMark, inOther time.Duration // the wait of each partition after an exhausted quota of mark's
		base            time.Duration // the key's BaseDelay
	}{
		{"own", time.Hour, time.Hour, time.Hour},
		{"default", time.Minute, 0, pace.None},
	} {
		l, err := p.Acquire(ctx, pace.Request{Key: c.key, Partition: mark})
		if err != nil {
			t.Fatalf("%s: Acquire = %v", c.key, err)
		}
		p.Release(l, pace.Outcome{Class: pace.Success, Quota: pace.Quota{Known: true, Reset: time.Minute, Partition: mark}})
		for partition, wait := range map[string]time.Duration{mark: c.inMark, "other": c.inOther} {
			ks, err := p.Ready(ctx, pace.Request{Key: c.key, Partition: partition})
			if err != nil {
				t.Fatalf("%s: Ready(%q) = %v", c.key, partition, err)
			}
			if got := time.Until(ks.Next); got > wait || got < wait-time.Second {
				t.Errorf("%s: Ready(%q).Next in %v; want %v", c.key, partition, got, wait)
			}
			if ks.Policy.BaseDelay != c.base {
				t.Errorf("%s: Ready(%q).Policy.BaseDelay = %v; want %v", c.key, partition, ks.Policy.BaseDelay, c.base)
			}
		}
	}
}
