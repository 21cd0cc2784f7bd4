package politetest_test

import (
	"testing"

	"github.com/polite-go/polite/pace"
	"github.com/polite-go/polite/politetest"
)

// TestMemoryPacer holds the in-memory Pacer to the policy.
func TestMemoryPacer(t *testing.T) {
	politetest.RunPacer(t, func(c pace.Config) pace.Pacer {
		p, err := pace.NewMemory(c)
		if err != nil {
			panic(err) // RunPacer's configs are valid
		}
		return p
	})
}
