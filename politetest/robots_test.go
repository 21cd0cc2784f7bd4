package politetest_test

import (
	"testing"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/politetest"
)

// TestMemoryRobotsStore holds the in-memory RobotsStore to the cases: one
// store is the whole fleet.
func TestMemoryRobotsStore(t *testing.T) {
	politetest.RunRobotsStore(t, func(*testing.T) func() polite.RobotsStore {
		s := polite.NewMemoryRobotsStore(1000)
		return func() polite.RobotsStore { return s }
	})
}
