package politeotel

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/polite-go/polite"
)

// scope is the instrumentation scope of the meter and of the tracers.
const scope = "github.com/polite-go/polite/otel"

// Telemetry reports what one or more transports do: on the spans of their
// requests, and as metrics. Build it with [New]. It is safe for concurrent
// use.
type Telemetry struct {
	m instruments

	mu      sync.Mutex // guards tracked
	tracked []*polite.PoliteTransport
}

// New returns the Telemetry that records the transports' metrics with a
// meter of mp, named for this package; a nil mp records none, and leaves
// the traces alone. The spans need no provider: they go on the request's
// span, and a robots.txt fetch's span is created by that span's own
// provider. New fails only when mp cannot make an instrument.
func New(mp metric.MeterProvider) (*Telemetry, error) {
	if mp == nil {
		mp = noop.NewMeterProvider()
	}
	t := new(Telemetry)
	if err := t.m.init(mp.Meter(scope), t.observeState); err != nil {
		return nil, err
	}
	return t, nil
}

// Option returns the option that makes a transport report to t: its hook,
// given to [polite.WithEvents].
func (t *Telemetry) Option() polite.Option {
	return polite.WithEvents(t.observe)
}

// Track adds pt to the transports whose state the observable instruments
// report. At each collection they call pt.Stats, which takes time and
// memory in proportion to the hosts pt tracks, a number that
// [polite.Limits] bounds. pt is kept, and reported, for as long as t is.
func (t *Telemetry) Track(pt *polite.PoliteTransport) {
	t.mu.Lock()
	t.tracked = append(t.tracked, pt)
	t.mu.Unlock()
}

// observe is the transports' hook.
func (t *Telemetry) observe(ev polite.Event) {
	ctx := ev.Context
	if ctx == nil {
		ctx = context.Background()
	}
	switch ev.Kind {
	case polite.EventSent:
		t.m.wait.Record(ctx, ev.Duration.Seconds())
		if len(ev.Waits) > 0 || ev.Duration >= time.Millisecond {
			spanWaits(ev)
		}
	case polite.EventRefused, polite.EventWouldRefuse:
		t.m.refusal(ctx, ev)
		spanRefusal(ev)
	case polite.EventBackoff:
		t.m.backoff(ctx, ev)
		spanBackoff(ev)
	case polite.EventRobotsFetched:
		t.m.fetched(ctx, ev)
		spanFetch(ev)
	case polite.EventHostEvicted:
		t.m.evicted.Add(ctx, 1)
	case polite.EventUnreadableField:
		t.m.unreadableField(ctx, ev.Field)
	}
}

// observeState reads the state of every tracked transport, for the
// observable instruments.
func (t *Telemetry) observeState(ctx context.Context) (state, error) {
	t.mu.Lock()
	tracked := t.tracked[:len(t.tracked):len(t.tracked)]
	t.mu.Unlock()
	var st state
	now := time.Now()
	for _, pt := range tracked {
		stats, err := pt.Stats(ctx) // a shared Pacer bounds its reads by its own timeout
		if err != nil {
			return state{}, err
		}
		for _, h := range stats {
			st.hosts++
			if h.PausedUntil.After(now) {
				st.paused++
			}
			st.waiting += int64(h.Waiting)
			st.inFlight += int64(h.InFlight)
		}
	}
	return st, nil
}
