package politeredis

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
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
}

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

// failed records that a call to Redis failed with err, and says so at the
// start of an outage.
func (h *health) failed(err error) {
	h.mu.Lock()
	h.lastProbe = time.Now()
	h.mu.Unlock()
	if !h.down.Swap(true) && h.logger != nil {
		h.logger.Warn("politeredis: redis unreachable; "+h.fallback+" until it answers", "err", err)
	}
}

// answered records that Redis answered, and says so at the end of an
// outage.
func (h *health) answered() {
	if h.down.Load() && h.down.Swap(false) && h.logger != nil {
		h.logger.Info("politeredis: redis answers again; " + h.resumed)
	}
}
