package main

import (
	"context"
	"os"
)

// interruptible returns a context that the first signal on sigs ends, so
// that the command stops its work and still reports what it did; at the
// second signal, it calls exit(exitInterrupted) at once. stop ends the
// watch and the context.
func interruptible(parent context.Context, sigs <-chan os.Signal, exit func(int)) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	done := make(chan struct{})
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-done:
			return
		}
		select {
		case <-sigs:
			exit(exitInterrupted)
		case <-done:
		}
	}()
	return ctx, func() {
		close(done)
		cancel()
	}
}
