package frontier_test

import (
	"net/http"
	"testing"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/frontier"
	"github.com/polite-go/polite/politetest"
)

// TestConformance holds Frontier to the contract of frontier.Queue, the
// cases that a Queue a fleet shares passes too: first in first out per
// host, one URL of a host out at a time, no URL handed out before its
// host can start, refusals dropped, Requeue, the bounds, Dedup, Next
// within its context, and ErrEmpty.
func TestConformance(t *testing.T) {
	politetest.RunQueue(t, func(base http.RoundTripper, opts []polite.Option, o frontier.Options) (frontier.Queue, *polite.PoliteTransport) {
		tr := polite.New(base, opts...)
		return frontier.New(tr, o), tr
	})
}
