package politeredis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"
)

// TestOutageCause checks what the outage warning adds to an error that
// says only that the call's context ended, from how the client's dials
// went.
func TestOutageCause(t *testing.T) {
	dialErr := fmt.Errorf("dial unix /run/redis.sock: connect: %w", syscall.ECONNREFUSED)
	other := errors.New("READONLY You can't write against a read only replica.")
	tests := []struct {
		name     string
		dials    []error // the dials the hook saw, in order
		answered bool    // Redis answered after them
		err      error
		want     string
	}{
		{"no dial seen", nil, false, context.DeadlineExceeded, "context deadline exceeded"},
		{"the last dial failed", []error{nil, dialErr}, false, context.DeadlineExceeded,
			"context deadline exceeded; the last dial failed: dial unix /run/redis.sock: connect: connection refused"},
		{"the last dial succeeded", []error{dialErr, nil}, false, context.DeadlineExceeded,
			"context deadline exceeded; connected, but redis did not answer in time"},
		{"a failed dial, then an answer", []error{dialErr}, true, context.DeadlineExceeded,
			"context deadline exceeded; connected, but redis did not answer in time"},
		{"wrapped", []error{dialErr}, false, fmt.Errorf("politeredis: robots.txt of http://h: %w", context.DeadlineExceeded),
			"politeredis: robots.txt of http://h: context deadline exceeded; the last dial failed: dial unix /run/redis.sock: connect: connection refused"},
		{"an error of its own", []error{dialErr}, false, other, other.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &health{dials: &dials{}}
			for _, err := range tt.dials {
				dial := dialWatch{h.dials}.DialHook(func(context.Context, string, string) (net.Conn, error) { return nil, err })
				dial(context.Background(), "unix", "/run/redis.sock")
			}
			if tt.answered {
				h.answered()
			}
			got := h.cause(tt.err)
			if got.Error() != tt.want {
				t.Errorf("cause = %q; want %q", got, tt.want)
			}
			if !errors.Is(got, tt.err) {
				t.Errorf("cause = %v; want it to match %v", got, tt.err)
			}
		})
	}
}
