package polite

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrRobotsBlocked is the error returned, wrapped in a [*RobotsBlockedError],
// when robots.txt does not let the transport fetch a URL. Through
// [http.Client] it arrives inside a [*url.Error], so test for it with
// [errors.Is]:
//
//	resp, err := client.Get(u)
//	if errors.Is(err, polite.ErrRobotsBlocked) {
//		// skip u
//	}
var ErrRobotsBlocked = errors.New("polite: blocked by robots.txt")

// RobotsBlockedError says why a request was refused. It matches
// [ErrRobotsBlocked] with [errors.Is].
type RobotsBlockedError struct {
	// URL is the request's URL.
	URL string
	// Agent is the product token that chose the robots.txt group,
	// for example "MyBot" for the User-Agent "MyBot/1.0 (+https://example.com/bot)".
	Agent string
	// RobotsURL is the robots.txt that decided, as fetched, for example
	// "https://example.com/robots.txt".
	RobotsURL string
	// Rule is the rule that decided, as "Disallow: /private/" or "" when it
	// is not known.
	Rule string
	// Reason is set when no rule decided, for example when robots.txt was
	// unreachable and the transport was built with [FailClosed].
	Reason string
}

// Error implements the error interface.
func (e *RobotsBlockedError) Error() string {
	why := e.Rule
	if why == "" {
		why = e.Reason
	}
	if why == "" {
		return fmt.Sprintf("polite: %s blocked by %s for %q", e.URL, e.RobotsURL, e.Agent)
	}
	return fmt.Sprintf("polite: %s blocked by %s for %q (%s)", e.URL, e.RobotsURL, e.Agent, why)
}

// Is reports whether target is [ErrRobotsBlocked].
func (e *RobotsBlockedError) Is(target error) bool { return target == ErrRobotsBlocked }

// RetryableError reports false: the request never reached the server,
// and a retry would be refused the same way. Retryers that ask an error
// this, such as aws-sdk-go-v2's, stop at once.
func (e *RobotsBlockedError) RetryableError() bool { return false }

// DeadlineError is returned when the earliest moment a request may start,
// given its pacing key's pace or backoff, or its partition's rate-limit
// quota, falls after its context's deadline. The transport fails at once instead of waiting for a deadline
// it cannot meet. It matches [context.DeadlineExceeded] with [errors.Is].
type DeadlineError struct {
	// Key is the pacing key: by default the host name in canonical form.
	Key string
	// Earliest is the earliest start the key's pace allowed.
	Earliest time.Time
	// Deadline is the request context's deadline.
	Deadline time.Time

	now time.Time // when the transport found the deadline too near; zero if unknown
}

// Error implements the error interface. It says how far ahead the next
// start and the deadline were when the transport gave up, for example
// "polite: next start to example.com in 2.1s, context deadline in 50ms".
func (e *DeadlineError) Error() string {
	if e.now.IsZero() {
		return fmt.Sprintf("polite: next start to %s at %s is past the context deadline %s",
			e.Key, e.Earliest.Format(time.RFC3339Nano), e.Deadline.Format(time.RFC3339Nano))
	}
	return fmt.Sprintf("polite: next start to %s in %v, context deadline in %v",
		e.Key, roundDuration(e.Earliest.Sub(e.now)), roundDuration(e.Deadline.Sub(e.now)))
}

// roundDuration rounds d to three significant digits or so, for messages.
func roundDuration(d time.Duration) time.Duration {
	for _, unit := range []time.Duration{time.Second, time.Millisecond, time.Microsecond} {
		if d >= 10*unit || d <= -10*unit {
			return d.Round(unit / 10)
		}
	}
	return d
}

// Timeout reports true: a DeadlineError is a timeout, so that
// [net.Error] and [*url.Error]'s Timeout see it as one.
func (e *DeadlineError) Timeout() bool { return true }

// RetryableError reports false: nothing was sent, and no retry within the
// same context can start before its key allows. Retryers that ask an
// error this, such as aws-sdk-go-v2's, stop at once, before they would
// count it as a network timeout; one that retries on a timeout without
// asking must be told to stop on a *DeadlineError (see the recipes of the
// nested module sdk/).
func (e *DeadlineError) RetryableError() bool { return false }

// Unwrap returns [context.DeadlineExceeded].
func (e *DeadlineError) Unwrap() error { return context.DeadlineExceeded }

// ErrInvalidConfig is matched by every [*ConfigError].
var ErrInvalidConfig = errors.New("polite: invalid configuration")

// A ConfigError reports an option or a field given an invalid value. [New]
// panics with one; [Validate] returns it. It matches [ErrInvalidConfig]
// with [errors.Is].
type ConfigError struct {
	// Option is the option or function given the value: "WithPacing",
	// "WithLimits", "WithRobotsTTL", "NewMemoryPacer"...
	Option string
	// Field is the field of a [PacingPolicy] or [Limits] given the value,
	// such as "BaseDelay"; "" for a value that is not a field.
	Field string
	// Value is the value given.
	Value any
	// Reason says what is wrong with it, for example "must not be
	// negative (None turns it off)".
	Reason string
}

// Error implements the error interface, for example
// "polite: WithPacing: BaseDelay -5s: must not be negative (None turns it off)".
func (e *ConfigError) Error() string {
	what := "nil"
	if e.Value != nil {
		what = fmt.Sprint(e.Value)
	}
	if e.Field != "" {
		what = e.Field + " " + what
	}
	return "polite: " + e.Option + ": " + what + ": " + e.Reason
}

// Is reports whether target is [ErrInvalidConfig].
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }
