package politeredis_test

import (
	"context"
	"net/http"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/frontier"
	politeredis "github.com/polite-go/polite/redis"
	"github.com/redis/go-redis/v9"
)

// A fleet of crawlers shares pacing and robots.txt through one Redis: run
// the same code in every process. (Compiled, not run: it needs a Redis
// server.)
func ExampleNewPacer() {
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{
		Addrs:                 []string{"localhost:6379"},
		ContextTimeoutEnabled: true, // calls end with the request's context
	})
	defer rdb.Close()

	client := &http.Client{Transport: polite.New(nil,
		polite.WithUserAgent("ExampleBot/1.0 (+https://example.com/bot)"),
		polite.WithPacer(politeredis.NewPacer(rdb)),
		polite.WithRobotsStore(politeredis.NewRobotsStore(rdb)),
	)}
	resp, err := client.Get("https://example.com/")
	if err != nil {
		return
	}
	resp.Body.Close()
}

// A fleet of crawlers shares its frontier through one Redis, as it shares
// pacing and robots.txt: every process adds the links it finds and takes
// the next URL of any host that can start, and a URL that a dead process
// held comes back to the others. The crawl is package frontier's; only
// the line that makes the frontier is the fleet's. (Compiled, not run: it
// needs a Redis server.)
func ExampleNewFrontier() {
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{
		Addrs:                 []string{"localhost:6379"},
		ContextTimeoutEnabled: true,
	})
	defer rdb.Close()
	tr := polite.New(nil,
		polite.WithUserAgent("ExampleBot/1.0 (+https://example.com/bot)"),
		polite.WithPacer(politeredis.NewPacer(rdb)),
		polite.WithRobotsStore(politeredis.NewRobotsStore(rdb)))

	// One process would write frontier.New(tr, frontier.Options{Dedup: true}).
	var f frontier.Queue = politeredis.NewFrontier(rdb, tr, frontier.Options{Dedup: true})
	ctx := context.Background()
	f.Add(ctx, "https://example.com/") // every process adds the seeds: the fleet queues them once
	client := &http.Client{Transport: tr}
	for {
		t, err := f.Next(ctx)
		if err != nil {
			return // frontier.ErrEmpty: the fleet's crawl is over
		}
		resp, err := client.Get(t.URL)
		if err != nil {
			t.Done()
			continue
		}
		// ... f.Add the links of the page, then end the turn.
		resp.Body.Close()
		t.Done()
	}
}
