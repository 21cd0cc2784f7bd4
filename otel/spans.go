package politeotel

import (
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/pace"
	"github.com/polite-go/polite/robotstxt"
)

// This file puts the events of the package documentation on the span of a
// request's context, and makes a robots.txt fetch's span. Each function
// does nothing unless that span is recording.

// recording returns the span of ev's request, and whether it records.
func recording(ev polite.Event) (trace.Span, bool) {
	if ev.Context == nil {
		return nil, false
	}
	span := trace.SpanFromContext(ev.Context)
	return span, span.IsRecording()
}

// spanWaits adds a polite.wait event for each stretch of ev's wait: its
// Waits, or, for a Pacer that says no cause, the wait for the turn.
func spanWaits(ev polite.Event) {
	span, ok := recording(ev)
	if !ok {
		return
	}
	if len(ev.Waits) == 0 {
		span.AddEvent("polite.wait", trace.WithTimestamp(ev.Time.Add(-ev.Duration)),
			trace.WithAttributes(attribute.Float64("polite.wait.duration", ev.Duration.Seconds())))
		return
	}
	addWaits(span, ev.Waits)
}

// addWaits adds a polite.wait event to span for each of waits.
func addWaits(span trace.Span, waits []pace.Wait) {
	for _, w := range waits {
		span.AddEvent("polite.wait", trace.WithTimestamp(w.Start), trace.WithAttributes(
			attribute.String("polite.wait.cause", string(w.Cause)),
			attribute.Float64("polite.wait.duration", w.Duration.Seconds())))
	}
}

// spanRefusal adds a polite.refused or polite.would_refuse event for ev,
// after the polite.wait events of what held the request up until then.
func spanRefusal(ev polite.Event) {
	span, ok := recording(ev)
	if !ok {
		return
	}
	addWaits(span, ev.Waits)
	name := "polite.refused"
	if ev.Kind == polite.EventWouldRefuse {
		name = "polite.would_refuse"
	}
	var attrs []attribute.KeyValue
	switch {
	case ev.Err != nil:
		attrs = append(attrs, attribute.String("polite.refusal.reason", "deadline"))
		if de := (*pace.DeadlineError)(nil); errors.As(ev.Err, &de) {
			if de.Cause != "" {
				attrs = append(attrs, attribute.String("polite.wait.cause", string(de.Cause)))
			}
			if !de.Now.IsZero() {
				attrs = append(attrs, attribute.Float64("polite.wait.duration", de.Earliest.Sub(de.Now).Seconds()),
					attribute.Float64("polite.deadline.remaining", de.Deadline.Sub(de.Now).Seconds()))
			}
		}
		attrs = append(attrs, attribute.String("polite.refusal.detail", ev.Err.Error()))
	case ev.Disallowed != (robotstxt.Usage{}):
		attrs = append(attrs, attribute.String("polite.refusal.reason", "usage"),
			attribute.String("polite.usage.disallowed", ev.Disallowed.String()))
		attrs = robotsAttrs(attrs, ev)
	default:
		attrs = append(attrs, attribute.String("polite.refusal.reason", "robots.txt"))
		attrs = robotsAttrs(attrs, ev)
	}
	span.AddEvent(name, trace.WithTimestamp(ev.Time), trace.WithAttributes(attrs...))
}

// robotsAttrs appends the group and the rule of ev, a refusal by
// robots.txt, to attrs, or why no rule refused it.
func robotsAttrs(attrs []attribute.KeyValue, ev polite.Event) []attribute.KeyValue {
	if ev.Group != "" {
		attrs = append(attrs, attribute.String("polite.robots.group", ev.Group))
	}
	if ev.Rule != "" {
		return append(attrs, attribute.String("polite.robots.rule", ev.Rule))
	}
	return append(attrs, attribute.String("polite.refusal.detail", ev.Reason))
}

// spanBackoff adds a polite.backoff event for ev.
func spanBackoff(ev polite.Event) {
	span, ok := recording(ev)
	if !ok {
		return
	}
	attrs := []attribute.KeyValue{attribute.Int("polite.backoff.level", ev.Level)}
	if ev.Level > 0 {
		attrs = append(attrs, attribute.Float64("polite.backoff.pause", ev.Pause.Seconds()),
			attribute.Float64("polite.backoff.retry_after", ev.RetryAfter.Seconds()))
	}
	if ev.Err != nil {
		attrs = append(attrs, attribute.String("polite.backoff.error", ev.Err.Error()))
	} else {
		attrs = append(attrs, attribute.Int("http.response.status_code", ev.Status))
	}
	span.AddEvent("polite.backoff", trace.WithTimestamp(ev.Time), trace.WithAttributes(attrs...))
}

// spanFetch makes the polite.robots_fetch span of ev, a child of the
// span of the request that started the fetch, with that span's provider.
func spanFetch(ev polite.Event) {
	parent, ok := recording(ev)
	if !ok {
		return
	}
	attrs := []attribute.KeyValue{
		attribute.String("url.full", ev.URL),
		attribute.Int("http.response.body.size", ev.Bytes),
		attribute.Bool("polite.robots.cached", ev.Status == 304 || ev.Stale),
		attribute.Int("polite.robots.rules", ev.Rules),
	}
	if ev.Status != 0 {
		attrs = append(attrs, attribute.Int("http.response.status_code", ev.Status))
	}
	_, span := parent.TracerProvider().Tracer(scope).Start(ev.Context, "polite.robots_fetch",
		trace.WithTimestamp(ev.Time.Add(-ev.Duration)), trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	if ev.Err != nil {
		span.SetStatus(codes.Error, ev.Err.Error())
	}
	span.End(trace.WithTimestamp(ev.Time))
}
