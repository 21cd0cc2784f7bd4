package pace

import (
	"math"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestClockReadsMonotonic checks that the epoch keeps its monotonic clock
// reading, without which time.Since would read the wall clock too and the
// clock would cost as much as time.Now.
func TestClockReadsMonotonic(t *testing.T) {
	if s := newClock().epoch.String(); !strings.Contains(s, " m=") {
		t.Errorf("epoch %s has no monotonic reading", s)
	}
}

func TestClockRoundTrips(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newClock()
		time.Sleep(90 * time.Minute)
		now := c.now()
		if got := c.timeOf(now); !got.Equal(time.Now()) {
			t.Errorf("timeOf(now()) = %v; want %v", got, time.Now())
		}
		if got := c.instantOf(time.Now().Add(time.Second)); got != now.add(time.Second) {
			t.Errorf("instantOf(now + 1s) = %d; want %d", got, now.add(time.Second))
		}
		if got := c.timeOf(0); !got.IsZero() {
			t.Errorf("timeOf(0) = %v; want the zero time", got)
		}
		if now < instant(epochLead) {
			t.Errorf("now() = %v; want at least epochLead, %v", time.Duration(now), epochLead)
		}
	})
}

func TestInstantAdd(t *testing.T) {
	tests := []struct {
		i    instant
		d    time.Duration
		want instant
	}{
		{10, 5, 15},
		{10, -5, 5},
		{math.MaxInt64 - 1, 1, math.MaxInt64},
		{math.MaxInt64 - 1, math.MaxInt64, math.MaxInt64}, // saturates, never wraps
		{1, math.MaxInt64, math.MaxInt64},
	}
	for _, tc := range tests {
		if got := tc.i.add(tc.d); got != tc.want {
			t.Errorf("instant(%d).add(%d) = %d; want %d", tc.i, tc.d, got, tc.want)
		}
	}
}
