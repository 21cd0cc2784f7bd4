package main

import (
	"fmt"
	"math"
	"slices"
	"syscall"
	"time"
)

// cpuTime returns the user and system CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// median returns the median of xs, or NaN for none.
func median(xs []float64) float64 { return quantile(xs, 0.5) }

// quantile returns the q-quantile of xs, interpolated between ranks.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	pos := q * float64(len(s)-1)
	i := int(pos)
	if i+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[i] + (pos-float64(i))*(s[i+1]-s[i])
}

// gapStats describes start-to-start gaps against a pace.
type gapStats struct {
	n                                  int
	below                              int // gaps shorter than the pace
	min, median, p90, p99, max, excess time.Duration
}

// gapsOf returns the gaps between consecutive times of ts, which must be
// sorted.
func gapsOf(ts []time.Duration) []float64 {
	var gaps []float64
	for i := 1; i < len(ts); i++ {
		gaps = append(gaps, float64(ts[i]-ts[i-1]))
	}
	return gaps
}

func summarise(gaps []float64, pace time.Duration) gapStats {
	s := gapStats{n: len(gaps)}
	if len(gaps) == 0 {
		return s
	}
	for _, g := range gaps {
		if time.Duration(g) < pace {
			s.below++
		}
	}
	d := func(q float64) time.Duration { return time.Duration(quantile(gaps, q)) }
	s.min, s.median, s.p90, s.p99, s.max = d(0), d(0.5), d(0.9), d(0.99), d(1)
	s.excess = s.median - pace
	return s
}

func (s gapStats) String() string {
	r := func(d time.Duration) string { return fmt.Sprintf("%.3fms", float64(d)/1e6) }
	return fmt.Sprintf("gaps=%d below-pace=%d min=%s median=%s (+%s) p90=%s p99=%s max=%s",
		s.n, s.below, r(s.min), r(s.median), r(s.excess), r(s.p90), r(s.p99), r(s.max))
}
