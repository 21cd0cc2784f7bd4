package politetest_test

import (
	"net/http"
	"testing"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/frontier"
	"github.com/polite-go/polite/politetest"
)

// TestQueueMemory holds package frontier's own Frontier to the Queue
// contract.
func TestQueueMemory(t *testing.T) {
	politetest.RunQueue(t, func(base http.RoundTripper, opts []polite.Option, o frontier.Options) (frontier.Queue, *polite.PoliteTransport) {
		tr := polite.New(base, opts...)
		return frontier.New(tr, o), tr
	})
}
