package pace

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// DeadlineError is returned when the earliest moment a request may start,
// given its key's pace or backoff, or its partition's rate-limit quota,
// falls after its context's deadline: the Pacer fails at once instead of
// waiting for a deadline it cannot meet. It matches
// [context.DeadlineExceeded] with [errors.Is].
type DeadlineError struct {
	// Key is the pacing key.
	Key string
	// Earliest is the earliest start the key allowed.
	Earliest time.Time
	// Deadline is the request context's deadline.
	Deadline time.Time
	// Now is when the Pacer found the deadline too near; the zero time
	// when it is not known.
	Now time.Time
	// Cause is what would hold the request until Earliest; "" when the
	// Pacer does not say.
	Cause Cause
}

// Error implements the error interface. It says how far ahead the next
// start and the deadline were when the Pacer gave up, for example
// "pace: next start to example.com in 2.1s, context deadline in 50ms".
func (e *DeadlineError) Error() string {
	if e.Now.IsZero() {
		return fmt.Sprintf("pace: next start to %s at %s is past the context deadline %s",
			e.Key, e.Earliest.Format(time.RFC3339Nano), e.Deadline.Format(time.RFC3339Nano))
	}
	return fmt.Sprintf("pace: next start to %s in %v, context deadline in %v",
		e.Key, roundDuration(e.Earliest.Sub(e.Now)), roundDuration(e.Deadline.Sub(e.Now)))
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

// Timeout reports true: a DeadlineError is a timeout, so that [net.Error]
// and [*url.Error]'s Timeout see it as one.
func (e *DeadlineError) Timeout() bool { return true }

// RetryableError reports false: nothing was sent, and no retry within the
// same context can start before its key allows. Retryers that ask an
// error this, such as aws-sdk-go-v2's, stop at once, before they would
// count it as a network timeout.
func (e *DeadlineError) RetryableError() bool { return false }

// Unwrap returns [context.DeadlineExceeded].
func (e *DeadlineError) Unwrap() error { return context.DeadlineExceeded }

// ErrInvalidPolicy is matched by every [*PolicyError].
var ErrInvalidPolicy = errors.New("pace: invalid policy")

// A PolicyError reports a field of a [Policy], or of a [Config], given an
// invalid value; see [Policy.Validate] and [Config.Validate]. It matches [ErrInvalidPolicy] with [errors.Is].
type PolicyError struct {
	// Field is the field given the value, such as "BaseDelay".
	Field string
	// Value is the value given.
	Value any
	// Reason says what is wrong with it, for example "must not be
	// negative (None turns it off)".
	Reason string
}

// Error implements the error interface, for example
// "pace: BaseDelay -5s: must not be negative (None turns it off)".
func (e *PolicyError) Error() string {
	return fmt.Sprintf("pace: %s %v: %s", e.Field, e.Value, e.Reason)
}

// Is reports whether target is [ErrInvalidPolicy].
func (e *PolicyError) Is(target error) bool { return target == ErrInvalidPolicy }
