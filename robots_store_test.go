package polite

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestMemoryRobotsStoreWaitersTakeExpired: callers waiting for a fetch take
// its result even when it is already expired, rather than fetch again one
// after another.
func TestMemoryRobotsStoreWaitersTakeExpired(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewMemoryRobotsStore(10)
		const o = "https://a.example:443"
		expired := &RobotsFetch{URL: o + "/robots.txt", Status: 200, Body: []byte{}, ETag: `"x"`, Expires: time.Now().Add(-time.Second)}
		release := make(chan struct{})
		var fetches atomic.Int32
		fetch := func(context.Context, *RobotsFetch) *RobotsFetch {
			if fetches.Add(1) == 1 {
				<-release
			}
			return expired
		}
		got := make(chan *RobotsFetch, 4)
		for range 4 {
			go func() {
				f, _ := s.Load(context.Background(), o, fetch)
				got <- f
			}()
		}
		synctest.Wait() // all four are in Load: one fetching, three waiting
		close(release)
		for range 4 {
			if f := <-got; f == nil || f.ETag != `"x"` {
				t.Errorf("Load = %v; want the expired copy", f)
			}
		}
		if n := fetches.Load(); n != 1 {
			t.Errorf("%d fetches; want 1, the waiters taking its result", n)
		}
	})
}
