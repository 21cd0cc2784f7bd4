package politeredis

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/pace"
)

// TestCrawlThroughOutage crawls one host through a transport that shares
// pacing and robots.txt in Redis, stops Redis mid-crawl and starts it
// again: every page is fetched within its context, robots.txt binds
// throughout, the host is never stuck, and the pace goes back to Redis.
func TestCrawlThroughOutage(t *testing.T) {
	c := newClient(t)
	var pages, robots atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			robots.Add(1)
			io.WriteString(w, "User-agent: *\nDisallow: /private\n")
			return
		}
		pages.Add(1)
		io.WriteString(w, "page")
	}))
	defer srv.Close()

	var log syncBuffer
	logger := slog.New(slog.NewTextHandler(&log, nil))
	prefix := freshPrefix()
	newPacer := NewPacer(c, WithKeyPrefix(prefix), WithTimeout(300*time.Millisecond), WithLogger(logger))
	store := NewRobotsStore(c, WithKeyPrefix(prefix), WithTimeout(300*time.Millisecond), WithLogger(logger))
	client := &http.Client{Transport: polite.New(nil, polite.WithPacer(newPacer), polite.WithRobotsStore(store),
		polite.WithPacing(pace.Policy{BaseDelay: 20 * time.Millisecond, Jitter: pace.None, LatencyFactor: pace.None}))}
	host := strings.TrimPrefix(srv.URL, "http://")
	host = host[:strings.LastIndexByte(host, ':')]
	starts := func() int64 {
		n, _ := stateField(t, c, prefix+":{"+host+"}", "n").(int64)
		return n
	}

	n := 0
	crawl := func(count int) {
		t.Helper()
		for range count {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/page/"+strconv.Itoa(n), nil)
			resp, err := client.Do(req)
			if err != nil {
				cancel()
				t.Fatalf("page %d: %v", n, err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			req, _ = http.NewRequestWithContext(ctx, "GET", srv.URL+"/private/"+strconv.Itoa(n), nil)
			if _, err := client.Do(req); !errors.Is(err, polite.ErrRobotsBlocked) {
				t.Errorf("private page %d: %v; want polite.ErrRobotsBlocked", n, err)
			}
			cancel()
			n++
		}
	}

	crawl(10)
	before := starts()
	if before == 0 {
		t.Fatal("no pacing state in redis before the outage")
	}
	stopServer()
	t.Cleanup(func() {
		if server == nil {
			restartServer(t)
		}
	})
	crawl(10)
	restartServer(t)
	// The first request a second after the outage began probes Redis and,
	// when it answers, paces there again.
	for i := 0; starts() == 0; i++ {
		if i == 40 {
			t.Fatal("the crawl did not go back to redis")
		}
		crawl(5)
		time.Sleep(100 * time.Millisecond)
	}
	if got := int(pages.Load()); got != n {
		t.Errorf("the host served %d pages of %d asked", got, n)
	}
	if got := strings.Count(log.String(), "unreachable"); got < 1 || got > 2 {
		t.Errorf("the outage was said %d times; want once by the pacer, and at most once by the robots store:\n%s", got, log.String())
	}
	if robots.Load() != 1 {
		t.Errorf("robots.txt fetched %d times; want once, the copy in force kept through the outage", robots.Load())
	}
}
