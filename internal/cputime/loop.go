package cputime

import "testing"

// Loop runs body in b.Loop and reports, besides ns/op, the process's CPU
// time per operation as cpu-ns/op. On a virtual machine whose host takes
// its cores away at times (steal time), wall time counts the waits and CPU
// time does not; CPU time counts the garbage collector's work on the other
// cores, which wall time may not.
func Loop(b *testing.B, body func()) {
	b.ReportAllocs()
	cpu0, ok := Process()
	for b.Loop() {
		body()
	}
	if cpu1, ok1 := Process(); ok && ok1 {
		b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
	}
}
