package politeotel

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/robotstxt"
)

// waitBuckets are the bounds of polite.wait.duration's buckets, in
// seconds: politeprom's.
var waitBuckets = []float64{0.001, 0.01, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600}

// The attribute sets of the metrics whose values are few, made once.
var (
	actionRefused = metric.WithAttributeSet(attribute.NewSet(attribute.String("polite.action", "refused")))
	actionSent    = metric.WithAttributeSet(attribute.NewSet(attribute.String("polite.action", "sent")))
	retryAfter    = metric.WithAttributeSet(attribute.NewSet(attribute.Bool("polite.retry_after", true)))
	noRetryAfter  = metric.WithAttributeSet(attribute.NewSet(attribute.Bool("polite.retry_after", false)))
)

// instruments are the metrics of the package documentation's table.
type instruments struct {
	wait       metric.Float64Histogram
	disallowed metric.Int64Counter
	usage      metric.Int64Counter
	backoffs   metric.Int64Counter
	fetches    metric.Int64Counter
	evicted    metric.Int64Counter
	unreadable metric.Int64Counter
}

// A state is what the observable instruments report: the transports'
// state, summed over their hosts.
type state struct {
	hosts, paused, waiting, inFlight int64
}

// init makes m's instruments with meter, and the observable ones, which
// read the transports' state with read at each collection.
func (m *instruments) init(meter metric.Meter, read func(context.Context) (state, error)) error {
	var errs []error
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, err := meter.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	gauge := func(name, unit, desc string) metric.Int64ObservableUpDownCounter {
		g, err := meter.Int64ObservableUpDownCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return g
	}
	wait, err := meter.Float64Histogram("polite.wait.duration", metric.WithUnit("s"),
		metric.WithDescription("How long each request passed to the base transport waited for its host's turn; robots.txt fetches excluded."),
		metric.WithExplicitBucketBoundaries(waitBuckets...))
	m.wait, errs = wait, append(errs, err)
	m.disallowed = counter("polite.robots.disallowed", "{request}", `Requests robots.txt disallowed, by what the transport did: "refused", or "sent" in RobotsReport mode.`)
	m.usage = counter("polite.usage.disallowed", "{request}", `Requests whose robots.txt usage preference disallowed a use the transport declared, once per use, by the use and what the transport did: "refused", or "sent" in RobotsReport mode.`)
	m.backoffs = counter("polite.backoffs", "{backoff}", "Rises of a host's backoff level, by whether the signal carried a Retry-After.")
	m.fetches = counter("polite.robots.fetches", "{fetch}", `robots.txt fetches, by status class ("error" when no response came) and result ("fetched" or "unreachable").`)
	m.evicted = counter("polite.hosts.evicted", "{host}", "Hosts whose pacing state was dropped to keep within the transport's Limits.MaxKeys.")
	m.unreadable = counter("polite.unreadable_fields", "{field}", "Rate-limit fields that could not be read, once per host and field, by the field's name.")
	hosts := gauge("polite.hosts.tracked", "{host}", "Hosts the transports track: hosts with pacing state or a cached robots.txt.")
	paused := gauge("polite.hosts.paused", "{host}", "Hosts paused now by a backoff or an exhausted rate limit.")
	waiting := gauge("polite.requests.waiting", "{request}", "Requests waiting for their host's turn.")
	inFlight := gauge("polite.requests.in_flight", "{request}", "Requests started whose response headers have not come.")
	_, err = meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		st, err := read(ctx)
		if err != nil {
			return err // the SDK reports it, and observes nothing
		}
		o.ObserveInt64(hosts, st.hosts)
		o.ObserveInt64(paused, st.paused)
		o.ObserveInt64(waiting, st.waiting)
		o.ObserveInt64(inFlight, st.inFlight)
		return nil
	}, hosts, paused, waiting, inFlight)
	if err := errors.Join(append(errs, err)...); err != nil {
		return fmt.Errorf("politeotel: making the instruments: %w", err)
	}
	return nil
}

// refusal counts ev, a refusal or a request sent that robots.txt did not
// allow; a refusal by a deadline counts in no metric.
func (m *instruments) refusal(ctx context.Context, ev polite.Event) {
	if ev.Err != nil {
		return
	}
	action := actionRefused
	if ev.Kind == polite.EventWouldRefuse {
		action = actionSent
	}
	if ev.Disallowed == (robotstxt.Usage{}) {
		m.disallowed.Add(ctx, 1, action)
		return
	}
	name := "refused"
	if ev.Kind == polite.EventWouldRefuse {
		name = "sent"
	}
	for use := range ev.Disallowed.All() {
		m.usage.Add(ctx, 1, metric.WithAttributes(attribute.String("polite.use", string(use)), attribute.String("polite.action", name)))
	}
}

// backoff counts ev when the backoff level rose.
func (m *instruments) backoff(ctx context.Context, ev polite.Event) {
	switch {
	case ev.Level == 0: // cleared
	case ev.RetryAfter > 0:
		m.backoffs.Add(ctx, 1, retryAfter)
	default:
		m.backoffs.Add(ctx, 1, noRetryAfter)
	}
}

// fetched counts ev, a robots.txt fetch.
func (m *instruments) fetched(ctx context.Context, ev polite.Event) {
	result := "fetched"
	if ev.Err != nil {
		result = "unreachable"
	}
	m.fetches.Add(ctx, 1, metric.WithAttributes(attribute.String("polite.robots.status_class", statusClass(ev.Status)),
		attribute.String("polite.robots.result", result)))
}

// unreadableField counts a rate-limit field that could not be read.
func (m *instruments) unreadableField(ctx context.Context, field string) {
	m.unreadable.Add(ctx, 1, metric.WithAttributes(attribute.String("polite.field", field)))
}

// statusClass returns "2xx" for 200 to 299, and so on; "error" for 0, a
// fetch that got no response.
func statusClass(code int) string {
	if code < 100 || code > 599 {
		return "error"
	}
	return strconv.Itoa(code/100) + "xx"
}
