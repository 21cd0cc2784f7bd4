package politeredis

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// health tracks whether Redis answers, for one Pacer or RobotsStore: it
// says once when an outage starts and once when it ends, and spaces the
// probes made during one.
type health struct {
	logger   *slog.Logger
	probe    time.Duration // the least time between two probes in an outage
	fallback string        // what the process does in an outage, for the log
	resumed  string        // what it does again when Redis answers, likewise

	down      atomic.Bool // Redis is unreachable
	mu        sync.Mutex  // guards lastProbe
	lastProbe time.Time   // when the last call to Redis was made in an outage

	// lastDial is how the client's last dial went, as watchDials sees it:
	// nil before any, a nil err after one that succeeded, or since Redis
	// last answered.
	lastDial atomic.Pointer[dialResult]
}

// dialResult is how a dial went: its error, nil when it succeeded.
type dialResult struct{ err error }

// dialOK is the dialResult of a dial that succeeded.
var dialOK = &dialResult{}

// skip reports whether a caller should not try Redis: it is down, and was
// tried less than a probe interval ago. Otherwise, in an outage, the caller
// is the probe.
func (h *health) skip() bool {
	if !h.down.Load() {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if now := time.Now(); now.Sub(h.lastProbe) >= h.probe {
		h.lastProbe = now
		return false
	}
	return true
}

// failed records that a call to Redis failed with err, and says so, with
// its cause, at the start of an outage.
func (h *health) failed(err error) {
	h.mu.Lock()
	h.lastProbe = time.Now()
	h.mu.Unlock()
	if !h.down.Swap(true) && h.logger != nil {
		h.logger.Warn("politeredis: redis unreachable; "+h.fallback+" until it answers", "err", h.cause(err))
	}
}

// answered records that Redis answered, and says so at the end of an
// outage. A dial that failed before is no longer the cause of anything.
func (h *health) answered() {
	if d := h.lastDial.Load(); d != nil && d.err != nil {
		h.lastDial.CompareAndSwap(d, dialOK)
	}
	if h.down.Load() && h.down.Swap(false) && h.logger != nil {
		h.logger.Info("politeredis: redis answers again; " + h.resumed)
	}
}

// cause returns err with what the client's dials tell of it, when err says
// only that the call's context ended: go-redis retries a dial that fails
// until then, and returns the context's error alone. It adds the last
// dial's error when that dial failed, or that a connection was made and
// Redis did not answer in time when it succeeded. When no dial was seen, as
// for a Cluster's nodes made before the Pacer or store, it can tell
// nothing more, and returns err.
func (h *health) cause(err error) error {
	if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
		return err
	}
	switch d := h.lastDial.Load(); {
	case d == nil:
		return err
	case d.err != nil:
		return fmt.Errorf("%w; the last dial failed: %w", err, d.err)
	}
	return fmt.Errorf("%w; connected, but redis did not answer in time", err)
}

// watchDials makes h see how client's dials go, for cause. A Cluster or
// Ring client dials through a client per node, so h watches the nodes it
// makes from now on.
func (h *health) watchDials(client redis.UniversalClient) {
	if c, ok := client.(interface{ OnNewNode(func(*redis.Client)) }); ok {
		c.OnNewNode(func(node *redis.Client) { node.AddHook(dialWatch{h}) })
		return
	}
	client.AddHook(dialWatch{h})
}

// dialWatch is a go-redis hook that records how each dial went in its
// health, and passes every call on untouched.
type dialWatch struct{ h *health }

func (w dialWatch) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := next(ctx, network, addr)
		if err != nil {
			w.h.lastDial.Store(&dialResult{err})
		} else {
			w.h.lastDial.Store(dialOK)
		}
		return conn, err
	}
}

func (dialWatch) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (dialWatch) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
