package politeredis

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/polite-go/polite"
	"github.com/redis/go-redis/v9"
)

// The tests of this file each hold up a call to a server that answers, in
// one way that once made a Pacer take the server for down: a call's
// failure must count against the server that failed, and only when that
// server had time to answer.

// loggedPacer returns a Pacer on c that paces with no delay, and what it
// logs.
func loggedPacer(c redis.UniversalClient, opts ...PacerOption) (*pacer, *syncBuffer) {
	log := &syncBuffer{}
	policy := polite.PacingPolicy{BaseDelay: polite.None, LatencyFactor: polite.None, Jitter: polite.None}
	opts = append([]PacerOption{WithKeyPrefix(freshPrefix()), WithLogger(slog.New(slog.NewTextHandler(log, nil)))}, opts...)
	return NewPacer(c, opts...)(policy).(*pacer), log
}

// inRedis fails t unless key's next request is admitted by Redis, not
// paced in memory, and says that the Pacer logged no outage.
func inRedis(t *testing.T, p *pacer, log *syncBuffer, key string) {
	t.Helper()
	l, err := p.Acquire(context.Background(), key, 0)
	if err != nil {
		t.Fatalf("Acquire(%s) = %v", key, err)
	}
	defer l.Release(polite.Outcome{Class: polite.OutcomeSuccess})
	if _, shared := l.(*lease); !shared {
		t.Errorf("Acquire(%s) paced in memory; want Redis, which answers", key)
	}
	if strings.Contains(log.String(), "unreachable") {
		t.Errorf("the Pacer took a server that answers for down:\n%s", log)
	}
}

// lapsed is a context whose deadline has passed while the timer that
// ends it has not fired yet, as on a busy machine: Err is nil, Done open.
type lapsed struct {
	context.Context
	deadline time.Time
}

func (c lapsed) Deadline() (time.Time, bool) { return c.deadline, true }

// TestDeadlinePassedBeforeCall gives Acquire a request whose deadline has
// passed by the clock, though its context has not ended yet: Acquire
// fails with the deadline, sends nothing, and the server stays up.
// Before, the admission went with a deadline already past, failed at once,
// and its failure took the server for down.
func TestDeadlinePassedBeforeCall(t *testing.T) {
	p, log := loggedPacer(hungClient(t))
	ctx := lapsed{context.Background(), time.Now().Add(-time.Millisecond)}
	if l, err := p.Acquire(ctx, "a", 0); !errors.Is(err, context.DeadlineExceeded) {
		if l != nil {
			l.Release(polite.Outcome{Class: polite.OutcomeSuccess})
		}
		t.Fatalf("Acquire past the request's deadline = %v, %v; want the deadline", l, err)
	}
	inRedis(t, p, log, "a")
}

// slowCalls is a go-redis hook that holds each command that match picks
// for d, or until its context ends, as a slow server would.
type slowCalls struct {
	d     time.Duration
	match func(redis.Cmder) bool
}

func (h slowCalls) hold(ctx context.Context, cmds ...redis.Cmder) error {
	for _, cmd := range cmds {
		if h.match(cmd) {
			select {
			case <-time.After(h.d):
			case <-ctx.Done():
				return ctx.Err()
			}
			return nil
		}
	}
	return nil
}

func (h slowCalls) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h slowCalls) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if err := h.hold(ctx, cmd); err != nil {
			return err
		}
		return next(ctx, cmd)
	}
}
func (h slowCalls) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if err := h.hold(ctx, cmds...); err != nil {
			return err
		}
		return next(ctx, cmds)
	}
}

// script returns a match for the commands that run s.
func script(s *redis.Script) func(redis.Cmder) bool {
	return func(cmd redis.Cmder) bool {
		args := cmd.Args()
		return cmd.Name() == "evalsha" && len(args) > 1 && args[1] == s.Hash()
	}
}

// TestDeadlineCutsCallShort sends an admission a moment before its
// request's deadline to a server that takes 50ms to answer it: Acquire
// fails at the deadline, and the server, which had no time to answer, is
// not taken for down. Before, any admission that the request's deadline
// cut short did. A server that does not answer in a tenth of WithTimeout
// still is (TestHungServer).
func TestDeadlineCutsCallShort(t *testing.T) {
	c := hungClient(t)
	p, log := loggedPacer(c)
	inRedis(t, p, log, "a") // the server has the scripts
	c.AddHook(slowCalls{d: 50 * time.Millisecond, match: script(p.admit)})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	if _, err := p.Acquire(ctx, "a", 0); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire cut short = %v; want the deadline", err)
	}
	inRedis(t, p, log, "a")
}
