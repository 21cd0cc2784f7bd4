package politeredis_test

import (
	"net/http"

	"github.com/polite-go/polite"
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
