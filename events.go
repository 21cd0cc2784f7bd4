package polite

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/polite-go/polite/pace"
	"github.com/polite-go/polite/robotstxt"
)

// An Event is something a [PoliteTransport] did or learnt, delivered to the
// hooks set with [WithEvents] and to the logger of [WithLogger]. Which
// fields are set depends on Kind.
type Event struct {
	Kind EventKind
	// Time is when it happened.
	Time time.Time
	// Key is the pacing key it concerns.
	Key string
	// URL is the request's URL, or the robots.txt URL for robots events.
	URL string
	// Context is the context of the request the event is about, as
	// RoundTrip was given it or one made from it with the same values, for
	// a hook that reports on the request's span or reads its values: the
	// request refused or sent, the request whose outcome changed the
	// backoff, or the request whose turn started a robots.txt fetch
	// (whichever asked first, when several waited for it, or Check's).
	// Nil for the events of no request.
	Context context.Context

	// Status is the HTTP status of the response the event is about (a
	// robots.txt fetch, a backoff signal, the response that cleared a
	// backoff); 0 when none came.
	Status int
	// Err says why a robots.txt fetch failed, or the error that signalled
	// a backoff (a timeout, a reset connection) when no response came.
	Err error
	// Stale reports that a failed robots.txt fetch left the last good copy in force.
	Stale bool
	// Rules and Skipped count a fetched robots.txt's rules and the lines
	// it skipped.
	Rules, Skipped int
	// Rule is the rule that refused a request, as "Disallow: /private/";
	// Reason says why when no rule did.
	Rule, Reason string
	// Group is the user-agent token of the robots.txt group that bound a
	// refused request ("mybot", or "*"); "" when no group did.
	Group string
	// Field is the name of a response field that could not be read, as
	// "RateLimit-Reset", and Value its value, cut to 100 bytes.
	Field, Value string
	// Disallowed holds the uses declared with [WithUsage] that a usage
	// preference of robots.txt disallows for the request's URL, each
	// [robotstxt.No] ("train-ai=n"), when that is what refused it; Rule
	// then holds the lines that state it, joined by "; ".
	Disallowed robotstxt.Usage

	// Duration is how long a robots.txt fetch took, or how long a request
	// waited for its turn.
	Duration time.Duration
	// Waits is what held a request up before it was sent or refused, in
	// order, each stretch with its cause: a robots.txt fetch it waited for
	// ([pace.CauseRobots]), before it asked for its turn; then, within
	// Duration, the global limiter ([pace.CauseGlobal]) and what the
	// Pacer reported (see [pace.Trace]). Nil when nothing held it up, and
	// for a wait whose Pacer reports no cause.
	Waits []pace.Wait
	// Bytes is the length of the robots.txt body read by a fetch: 0 for a
	// 304, a 4xx or a failure.
	Bytes int
	// Level is the backoff level after the event.
	Level int
	// Pause is how long the host is paused from Time on.
	Pause time.Duration
	// RetryAfter is the server's Retry-After, 0 if it sent none.
	RetryAfter time.Duration
}

// EventKind says what an [Event] is about.
type EventKind int

const (
	// EventRobotsFetched: a robots.txt fetch ended: Status, Rules,
	// Skipped, Bytes, Duration, with Time its end; and Err when the file
	// is unreachable (a 429, a 5xx, a network error, a timeout), with
	// Stale when the last good copy stays in force. A 304 keeps the copy
	// in force. A copy that a [RobotsStore] gives, fetched by another, is
	// no fetch of this transport's, and makes no event.
	EventRobotsFetched EventKind = iota + 1
	// EventRefused: a request was refused unsent. By robots.txt: URL, and
	// Rule and Group, or Reason (its rules disallow the URL; the file is
	// unreachable, or does not decide the URL, and the failure policy
	// refuses it: see [WithRobotsFailure]); or Disallowed, Rule and Group,
	// for a usage preference that disallows a use declared with
	// [WithUsage]. Or by its deadline: URL, and Err, the
	// [*pace.DeadlineError] that RoundTrip returns. And Waits, what held
	// the request up until then.
	EventRefused
	// EventWouldRefuse: robots.txt did not allow a request that was sent
	// all the same, with the fields of EventRefused: in [RobotsReport]
	// mode, or, for a URL the file does not decide, under FailOpen (see
	// [WithRobotsFailure]).
	EventWouldRefuse
	// EventSent: a request was passed to the base transport, at Time:
	// URL, Duration, how long it waited for its turn, from asking for it
	// to getting it (0, or next to it, when nothing held it up), and
	// Waits, what held it up. Every request sent makes one, after the base
	// returns; the transport's own robots.txt fetches do not.
	EventSent
	// EventBackoff: the key's backoff level changed: the URL of the
	// request whose outcome changed it, its Status or Err, and Level. A
	// signal raised it (Level above 0), with Pause and RetryAfter; or
	// successes or a quiet spell cleared it (Level 0).
	EventBackoff
	// EventHostEvicted: the key's pacing state was dropped to keep within
	// [Limits].MaxKeys.
	EventHostEvicted
	// EventUnreadableField: a response had a rate-limit field (see the
	// package documentation) that could not be read, so that its quota
	// goes unheeded: URL, Field, Value. It is said once per key and
	// field, for the first 1024 of them; then the record starts afresh.
	EventUnreadableField
)

var eventKindNames = [...]string{
	EventRobotsFetched:   "robots.txt fetched",
	EventRefused:         "refused by robots.txt",
	EventWouldRefuse:     "robots.txt would refuse",
	EventSent:            "sent",
	EventBackoff:         "backing off",
	EventHostEvicted:     "host evicted",
	EventUnreadableField: "unreadable field",
}

// String returns the kind as the logger's messages name it, such as
// "backing off".
func (k EventKind) String() string {
	if k > 0 && int(k) < len(eventKindNames) {
		return eventKindNames[k]
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// emitter delivers events to the hooks, in the order they were set. A nil
// emitter delivers nothing and costs one comparison.
type emitter []func(Event)

// on reports whether anyone listens.
func (e emitter) on() bool { return len(e) > 0 }

// emit delivers ev, stamping its time. The caller holds no lock.
func (e emitter) emit(ev Event) {
	if len(e) == 0 {
		return
	}
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	for _, hook := range e {
		hook(ev)
	}
}

// longest returns the cause of the longest of waits, or "" for none.
func longest(waits []pace.Wait) pace.Cause {
	var w pace.Wait
	for _, x := range waits {
		if x.Duration > w.Duration || w.Cause == "" {
			w = x
		}
	}
	return w.Cause
}

// slowWait is how long a request must wait for its turn for the logger
// to log it at Info rather than Debug.
const slowWait = time.Second

// logEvents returns a hook that logs events to l, at the levels and with
// the attributes that [WithLogger] documents.
func logEvents(l *slog.Logger) func(Event) {
	return func(ev Event) {
		level, msg := slog.LevelInfo, "polite: "+ev.Kind.String()
		attrs := []slog.Attr{slog.String("key", ev.Key)}
		switch ev.Kind {
		case EventRobotsFetched:
			attrs = append(attrs, slog.String("url", ev.URL), slog.Int("status", ev.Status))
			if ev.Err != nil {
				level, msg = slog.LevelWarn, "polite: robots.txt unreachable"
				attrs = append(attrs, slog.Any("error", ev.Err), slog.Bool("stale", ev.Stale))
			} else {
				attrs = append(attrs, slog.Int("rules", ev.Rules), slog.Int("skipped_lines", ev.Skipped), slog.Int("bytes", ev.Bytes))
			}
			attrs = append(attrs, slog.Duration("duration", ev.Duration))
		case EventRefused, EventWouldRefuse:
			if ev.Kind == EventRefused && ev.Err != nil { // by its deadline
				msg = "polite: refused by its deadline"
				attrs = append(attrs, slog.String("url", ev.URL), slog.Any("error", ev.Err))
				break
			}
			if ev.Kind == EventRefused {
				level = slog.LevelDebug
			}
			attrs = append(attrs, slog.String("url", ev.URL))
			if ev.Disallowed != (robotstxt.Usage{}) {
				attrs = append(attrs, slog.String("disallowed", ev.Disallowed.String()))
			}
			if ev.Rule != "" {
				attrs = append(attrs, slog.String("rule", ev.Rule))
			} else {
				attrs = append(attrs, slog.String("reason", ev.Reason))
			}
			if ev.Group != "" {
				attrs = append(attrs, slog.String("group", ev.Group))
			}
		case EventSent:
			if ev.Duration >= slowWait {
				msg = "polite: waited"
			} else {
				level = slog.LevelDebug
			}
			attrs = append(attrs, slog.String("url", ev.URL), slog.Duration("wait", ev.Duration))
			if c := longest(ev.Waits); c != "" {
				attrs = append(attrs, slog.String("cause", string(c)))
			}
		case EventBackoff:
			if ev.Level == 0 {
				msg = "polite: backoff cleared"
			}
			attrs = append(attrs, slog.String("url", ev.URL))
			if ev.Err != nil {
				attrs = append(attrs, slog.Any("error", ev.Err))
			} else {
				attrs = append(attrs, slog.Int("status", ev.Status))
			}
			if ev.Level > 0 {
				attrs = append(attrs, slog.Int("level", ev.Level), slog.Duration("pause", ev.Pause), slog.Duration("retry_after", ev.RetryAfter))
			}
		case EventUnreadableField:
			level = slog.LevelWarn
			attrs = append(attrs, slog.String("url", ev.URL), slog.String("field", ev.Field), slog.String("value", ev.Value))
		}
		l.LogAttrs(context.Background(), level, msg, attrs...)
	}
}
