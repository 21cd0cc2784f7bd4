package pace_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/polite-go/polite/pace"
)

// A program that sends its own requests asks the Pacer for each one's
// turn, and gives the turn back with how the request ended.
func Example() {
	p, err := pace.NewMemory(pace.Config{Policy: pace.Policy{BaseDelay: 50 * time.Millisecond, Jitter: pace.None}})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for _, path := range []string{"/a", "/b"} {
		l, err := p.Acquire(ctx, pace.Request{Key: "example.com"})
		if err != nil {
			return // ctx ended, or its deadline falls before the turn
		}
		// resp, err := transport.RoundTrip(req), for https://example.com + path
		p.Release(l, pace.Outcome{Class: pace.Success})
		fmt.Println("sent", path)
	}
	ks, _ := p.Ready(ctx, pace.Request{Key: "example.com"})
	fmt.Println("pace:", ks.Pace, "requests:", ks.Requests)
	// Output:
	// sent /a
	// sent /b
	// pace: 50ms requests: 2
}

// A 429 with a Retry-After pauses the key: a request whose deadline falls
// before the pause ends fails at once, rather than at its deadline.
func ExampleDeadlineError() {
	p, _ := pace.NewMemory(pace.Config{})
	l, _ := p.Acquire(context.Background(), pace.Request{Key: "api.example.com"})
	c := p.Release(l, pace.Outcome{Class: pace.Signal, RetryAfter: 30 * time.Second})
	fmt.Println("backoff level", c.Level, "paused for", c.Pause)

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := p.Acquire(ctx, pace.Request{Key: "api.example.com"})
	var de *pace.DeadlineError
	fmt.Println(errors.As(err, &de), errors.Is(err, context.DeadlineExceeded))
	// Output:
	// backoff level 1 paused for 30s
	// true true
}

// Value reads a field of a policy as a Pacer runs it: None turns the part
// off, which a Pacer reads as 0.
func ExampleValue() {
	pol := pace.Policy{BaseDelay: pace.None, MaxInFlight: 4}.Effective()
	fmt.Println(pace.Value(pol.BaseDelay), pace.Value(pol.MaxInFlight), pace.Value(pol.Jitter))
	// Output:
	// 0s 4 0.5
}
