package pace

import (
	"math"
	"time"
)

// An instant is a reading of a pacer's clock: the time since its epoch.
type instant time.Duration

// epochLead puts a clock's epoch long before the clock was made, so that
// the zero instant is long past, as the zero time.Time is (a host never
// signalled has a last signal older than forgetAfter), whichever clock
// reads it: a testing/synctest bubble's starts in 2000, and a pacer made
// outside a bubble and used inside one still reads positive instants. An
// instant holds 292 years; this leaves 192 of them.
const epochLead = 100 * 365 * 24 * time.Hour

// A clock reads the time as instants. Reading it costs a little more than
// half of time.Now, since only the monotonic clock is read, and instants
// compare and subtract as integers. The pacer reads it on every request.
type clock struct {
	epoch time.Time // carries a monotonic reading, outside testing/synctest bubbles
}

func newClock() clock { return clock{epoch: time.Now().Add(-epochLead)} }

// now returns the current instant.
func (c clock) now() instant { return instant(time.Since(c.epoch)) }

// instantOf returns the instant of t.
func (c clock) instantOf(t time.Time) instant { return instant(t.Sub(c.epoch)) }

// timeOf returns the time of i, or the zero time for the zero instant. Its
// wall clock reading is derived from the epoch's, so a step of the system
// clock after the clock was made does not show in it.
func (c clock) timeOf(i instant) time.Time {
	if i == 0 {
		return time.Time{}
	}
	return c.epoch.Add(time.Duration(i))
}

// add returns i moved by d, saturating instead of overflowing.
func (i instant) add(d time.Duration) instant {
	if d > 0 && i > instant(math.MaxInt64-d) {
		return math.MaxInt64
	}
	return i + instant(d)
}
