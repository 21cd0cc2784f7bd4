package polite

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/polite-go/polite/robotstxt"
)

// testCache returns a robots cache of at most max origins whose fetch
// answers 404 and counts its calls.
func testCache(max int, fetches *atomic.Int64) *robotsCache {
	return newRobotsCache(func(_ context.Context, k originKey, _ *robotsRecord) *robotsRecord {
		fetches.Add(1)
		return &robotsRecord{url: k.String() + "/robots.txt", status: 404, counts: new(robotsCounts)}
	}, nil, time.Hour, max, defaultLimits.RobotsCacheBytes)
}

func origin(i int) *originKey { return &originKey{"http", fmt.Sprintf("h%d.example", i), "80"} }

// cached counts the entries of every shard, and checks the count kept
// alongside.
func cached(t *testing.T, c *robotsCache) int {
	t.Helper()
	n := 0
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		n += len(s.entries)
		s.mu.Unlock()
	}
	if int64(n) != c.size.Load() {
		t.Errorf("shards hold %d entries; size says %d", n, c.size.Load())
	}
	return n
}

func TestRobotsCacheBoundSpansShards(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var fetches atomic.Int64
		c := testCache(100, &fetches)
		ctx := context.Background()
		for i := range 50 { // these expire first
			c.get(ctx, origin(i), nil)
		}
		time.Sleep(30 * time.Minute)
		for i := 50; i < 100; i++ {
			c.get(ctx, origin(i), nil)
		}
		if n := cached(t, c); n != 100 {
			t.Fatalf("%d origins cached; want 100: the bound is on the whole cache, not on each shard", n)
		}
		time.Sleep(31 * time.Minute) // the first 50 have expired

		c.get(ctx, origin(100), nil) // full: expired files go first, and that is room enough
		if n := cached(t, c); n != 51 {
			t.Errorf("%d origins cached after the eviction; want the 50 fresh ones and the new one", n)
		}
		before := fetches.Load()
		for i := 50; i <= 100; i++ {
			c.get(ctx, origin(i), nil)
		}
		if refetched := fetches.Load() - before; refetched != 0 {
			t.Errorf("%d fresh origins fetched again; want 0", refetched)
		}

		for i := 101; i <= 150; i++ { // full at 150: nothing expired, so drop at random below 3/4
			c.get(ctx, origin(i), nil)
		}
		if n := cached(t, c); n != 75 {
			t.Errorf("%d origins cached after a random eviction; want 74 and the new one", n)
		}
	})
}

func TestRobotsCacheConcurrentEviction(t *testing.T) {
	var fetches atomic.Int64
	c := testCache(16, &fetches)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				if _, err := c.get(context.Background(), origin(g*1000+i), nil); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if n := cached(t, c); n > 16+8 { // soft: each goroutine may insert past a full cache once
		t.Errorf("%d origins cached; want about 16", n)
	}
}

func TestShardIndexSpreadsHosts(t *testing.T) {
	var counts [shardCount]int
	for i := range 64 * shardCount {
		counts[shardIndex(fmt.Sprintf("host-%d.example", i))]++
	}
	for i, n := range counts {
		if n < 16 || n > 160 { // 64 expected
			t.Errorf("shard %d holds %d of %d hosts; want about 64", i, n, 64*shardCount)
		}
	}
}

// TestRobotsCacheFullOfFetches checks that a cache full of entries being
// fetched, none of which can be dropped, is not scanned again on every
// insert, and comes back under its bound once the fetches have ended.
func TestRobotsCacheFullOfFetches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const max, origins = 10, 2000
		release := make(chan struct{})
		c := newRobotsCache(func(_ context.Context, k originKey, _ *robotsRecord) *robotsRecord {
			<-release
			return &robotsRecord{url: k.String() + "/robots.txt", status: 404, counts: new(robotsCounts)}
		}, nil, time.Hour, max, defaultLimits.RobotsCacheBytes)
		var wg sync.WaitGroup
		for i := range origins {
			wg.Go(func() { c.get(context.Background(), origin(i), nil) })
		}
		synctest.Wait() // every fetch started
		if n := c.evicts.Load(); n > 16 {
			t.Errorf("%d evictions for %d inserts into a cache of %d being fetched; want a few, doubling", n, origins, max)
		}
		close(release)
		wg.Wait()
		if _, err := c.get(context.Background(), origin(origins), nil); err != nil {
			t.Fatal(err)
		}
		if n := cached(t, c); n > max {
			t.Errorf("%d origins cached after the fetches ended; want at most %d", n, max)
		}
	})
}

// TestRobotsCacheByteBudget checks that large files evict others rather
// than grow the cache past its byte budget, whatever the count bound.
func TestRobotsCacheByteBudget(t *testing.T) {
	const budget, cost = 10 << 20, 1 << 20 // room for ten files of 1 MiB
	c := newRobotsCache(func(_ context.Context, k originKey, _ *robotsRecord) *robotsRecord {
		return &robotsRecord{url: k.String() + "/robots.txt", status: 200, cost: cost, counts: new(robotsCounts)}
	}, nil, time.Hour, 1000, budget)
	for i := range 100 {
		if _, err := c.get(context.Background(), origin(i), nil); err != nil {
			t.Fatal(err)
		}
		if b := c.bytes.Load(); b > budget+cost {
			t.Fatalf("after %d files the cache holds %d bytes; want at most the budget and one file, %d", i+1, b, budget+cost)
		}
	}
	if n := cached(t, c); n < 7 || n > 11 {
		t.Errorf("%d files cached; want about ten", n)
	}
}

// TestRobotsCostBoundsWhatAFileKeeps checks that robotsCost, what the
// cache's budget counts for a file, is no less than what the file keeps
// parsed with all its groups compiled, for a large file of wildcard rules
// of non-ASCII pieces, each octet of which matching writes as three, and
// a group that names 16 tokens, asked for by each.
func TestRobotsCostBoundsWhatAFileKeeps(t *testing.T) {
	var b strings.Builder
	for i := range 16 {
		fmt.Fprintf(&b, "User-agent: Bot%d\n", i)
	}
	for i := 0; b.Len() < 100<<10; i++ {
		fmt.Fprintf(&b, "Disallow: /*x%d*ü%d*é$\n", i, i*7)
	}
	body := []byte(b.String())
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := robotstxt.Parse(body)
	for i := range 16 {
		r.Group(fmt.Sprintf("Bot%d/1.0", i)).Decide("/x1/ü7/é")
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	kept := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	runtime.KeepAlive(r)
	if got := robotsCost(r); kept > got {
		t.Errorf("a %d-byte file keeps %d bytes; robotsCost says %d", len(body), kept, got)
	}
}

// TestRobotsCacheOverBudgetWhileRefetching checks that a cache over its
// byte budget because of a file being fetched again, which it cannot drop,
// is not rescanned on every insert.
func TestRobotsCacheOverBudgetWhileRefetching(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const budget = 1 << 20
		release := make(chan struct{})
		var fetched atomic.Int64
		c := newRobotsCache(func(_ context.Context, k originKey, _ *robotsRecord) *robotsRecord {
			if fetched.Add(1) > 1 {
				<-release // every fetch but the first hangs
			}
			return &robotsRecord{url: k.String() + "/robots.txt", status: 200, cost: 2 * budget, counts: new(robotsCounts)}
		}, nil, time.Hour, 1000, budget)
		if _, err := c.get(context.Background(), origin(0), nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Hour) // origin 0 expires, and its refetch hangs
		ctx, cancel := context.WithCancel(context.Background())
		go c.get(ctx, origin(0), nil)
		synctest.Wait()
		for i := 1; i <= 100; i++ {
			go c.get(ctx, origin(i), nil)
			synctest.Wait()
		}
		if n := c.evicts.Load(); n > 2 {
			t.Errorf("%d scans for 100 inserts into a cache over budget that cannot shrink; want at most 2", n)
		}
		cancel()
		close(release)
		synctest.Wait()
	})
}
