package politetest_test

import (
	"testing"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/politetest"
)

// TestMemoryPacer holds the transport's own Pacer to the policy.
func TestMemoryPacer(t *testing.T) {
	politetest.RunPacer(t, func(p polite.Policies) polite.Pacer {
		pacer, err := polite.NewMemoryPacer(p, 0)
		if err != nil {
			panic(err) // RunPacer's policies are valid
		}
		return pacer
	})
}
