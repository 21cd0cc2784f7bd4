// Package human writes durations, sizes and absent values the way the
// command's tables, log lines and reports show them to people.
package human

import (
	"fmt"
	"time"
)

// Duration formats d for tables and log lines: tens of microseconds below
// 1ms, milliseconds below 10s, tenths of a second above, and "0" for zero.
func Duration(d time.Duration) string {
	switch {
	case d == 0:
		return "0"
	case d < time.Millisecond && d > -time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	case d < 10*time.Second && d > -10*time.Second:
		return d.Round(time.Millisecond).String()
	}
	return d.Round(100 * time.Millisecond).String()
}

// Bytes formats a byte count in powers of 1,000: "1.2 MB".
func Bytes(n int64) string {
	if n < 1000 {
		return fmt.Sprintf("%d B", n)
	}
	f := float64(n)
	for _, unit := range []string{"kB", "MB", "GB", "TB"} {
		f /= 1000
		if f < 1000 {
			return fmt.Sprintf("%.1f %s", f, unit)
		}
	}
	return fmt.Sprintf("%.1f PB", f/1000)
}

// OrNone returns s, or "none" when s is empty: a group, a rule or a
// Crawl-delay that is not there.
func OrNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
