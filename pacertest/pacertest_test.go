package pacertest_test

import (
	"testing"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/pacertest"
)

// TestMemoryPacer holds the transport's own Pacer to the policy.
func TestMemoryPacer(t *testing.T) {
	pacertest.Run(t, polite.NewMemoryPacer)
}
