//go:build !unix

package cputime

import "time"

// Process reports that the process's CPU time cannot be read here.
func Process() (d time.Duration, ok bool) { return 0, false }
