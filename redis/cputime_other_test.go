//go:build !unix

package politeredis

import "time"

// processCPU reports that this platform has no process CPU time to read.
func processCPU() (time.Duration, bool) { return 0, false }
