package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/pace"
)

// handoffRecorder wraps a PoliteTransport, Ready included, and records when
// each URL was handed to it.
type handoffRecorder struct {
	*polite.PoliteTransport

	mu sync.Mutex
	at map[string][]time.Time // URL → hand-overs, in order
}

func (h *handoffRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	h.mu.Lock()
	h.at[req.URL.String()] = append(h.at[req.URL.String()], time.Now())
	h.mu.Unlock()
	return h.PoliteTransport.RoundTrip(req)
}

// A schedStart is a request as the fake wire saw it start.
type schedStart struct {
	url    string
	at     time.Time
	status int
}

// schedWeb is a fake base transport. Every host serves a chain of pages, /
// linking to /1, /1 to /2, and so on up to /chain; but the hosts named in
// paused answer their front page 429 with Retry-After: retryAfter the first
// time. /slow answers 404 after slow. Every robots.txt is 404.
type schedWeb struct {
	chain      int
	paused     []string
	retryAfter int
	slow       time.Duration

	mu     sync.Mutex
	starts []schedStart
	front  map[string]int // requests for each paused host's front page
}

func (w *schedWeb) RoundTrip(req *http.Request) (*http.Response, error) {
	status, header, body := http.StatusNotFound, http.Header{"Content-Type": {"text/html"}}, ""
	host, path := req.URL.Host, req.URL.Path
	w.mu.Lock()
	switch {
	case path == "/robots.txt":
	case slices.Contains(w.paused, host) && path == "/" && w.front[host] == 0:
		w.front[host]++
		status = http.StatusTooManyRequests
		header.Set("Retry-After", strconv.Itoa(w.retryAfter))
	default:
		i, err := strconv.Atoi(strings.TrimPrefix(path, "/"))
		if path == "/" {
			i, err = 0, nil
		}
		if err == nil && i <= w.chain {
			status = http.StatusOK
			if i < w.chain {
				body = fmt.Sprintf(`<a href="/%d">next</a>`, i+1)
			}
		}
	}
	if path != "/robots.txt" {
		w.starts = append(w.starts, schedStart{url: req.URL.String(), at: time.Now(), status: status})
	}
	w.mu.Unlock()
	if path == "/slow" {
		time.Sleep(w.slow)
	}
	return &http.Response{
		StatusCode: status,
		Header:     header,
		Body:       io.NopCloser(strings.NewReader(body)),
		Request:    req,
	}, nil
}

// TestCrawlerSchedulesReadyHosts checks that the crawler hands its workers
// hosts that the transport reports ready, instead of requests that would
// wait in the transport: no request waits there, not even a host's first,
// whose robots.txt the frontier fetched ahead; and while hosts are paused
// by a 429 with Retry-After, the workers go on crawling host b, which is
// not.
func TestCrawlerSchedulesReadyHosts(t *testing.T) {
	const delay = time.Second
	tests := []struct {
		name    string
		workers int
		others  []string // hosts besides b
		paused  []string // of others
	}{
		{"one worker, one host", 1, nil, nil},
		{"one worker, two hosts", 1, []string{"a"}, nil},
		{"two workers, three hosts", 2, []string{"a", "c"}, nil},
		{"one worker, one host paused", 1, []string{"a"}, []string{"a"}},
		{"two workers, two hosts paused", 2, []string{"a", "c"}, []string{"a", "c"}},
		{"four workers, two hosts paused", 4, []string{"a", "c"}, []string{"a", "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				web := &schedWeb{chain: 10, paused: tt.paused, retryAfter: 30, front: make(map[string]int)}
				tr := &handoffRecorder{
					PoliteTransport: polite.New(web, polite.WithPacing(pace.Policy{BaseDelay: delay, Jitter: pace.None})),
					at:              make(map[string][]time.Time),
				}
				var mu sync.Mutex
				var records []pageRecord
				c := newCrawler(tr, crawlOptions{maxPages: 100, maxDepth: 20, concurrency: tt.workers, retries: 1},
					func(r pageRecord) {
						mu.Lock()
						records = append(records, r)
						mu.Unlock()
					})
				seeds := []*url.URL{}
				for _, h := range append(slices.Clone(tt.others), "b") {
					seeds = append(seeds, mustParse(t, "http://"+h+"/"))
				}
				t0 := time.Now()
				if idle := c.run(context.Background(), seeds); idle {
					t.Error("run stopped on the idle timeout")
				}

				if want := 11*(len(tt.others)+1) + len(tt.paused); len(records) != want {
					t.Errorf("%d records; want %d", len(records), want)
				}
				// No request waits in the transport.
				sent := make(map[string]int)
				var lastB, firstRetry time.Time
				for _, s := range web.starts {
					u := mustParse(t, s.url)
					handed := tr.at[s.url][sent[s.url]]
					sent[s.url]++
					if waited := s.at.Sub(handed); waited != 0 {
						t.Errorf("%s waited %v in the transport; want 0", s.url, waited)
					}
					switch {
					case u.Host == "b":
						lastB = s.at
					case sent[s.url] == 2 && firstRetry.IsZero():
						firstRetry = s.at
						if s.status != http.StatusOK {
							t.Errorf("retry of %s answered %d; want 200", s.url, s.status)
						}
					}
				}
				if len(tt.paused) > 0 {
					if firstRetry.IsZero() {
						t.Fatal("no paused host was tried again")
					}
					if got := firstRetry.Sub(t0); got < 30*time.Second {
						t.Errorf("first retry after %v; want no sooner than the Retry-After, 30s", got)
					}
					if !lastB.Before(firstRetry) {
						t.Errorf("b's last page started at +%v, the first retry at +%v; want b crawled while the others were paused",
							lastB.Sub(t0), firstRetry.Sub(t0))
					}
				}
				// b's pages came at its pace, a second apart, after its
				// robots.txt.
				if got, want := lastB.Sub(t0), time.Duration(len(tt.others)+11)*delay; got > want {
					t.Errorf("b's last page started at +%v; want by +%v", got, want)
				}
			})
		})
	}
}

// busyPoll is how often the frontier asks again about a host that the
// transport reports busy with requests that are not its own.
const busyPoll = 50 * time.Millisecond

// TestCrawlerPollsBusyHost checks that a host the transport reports busy,
// with a request of someone else's in flight, is looked at again every
// busyPoll and taken once it is free, instead of a worker waiting for it in
// the transport.
func TestCrawlerPollsBusyHost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const slow = 5 * time.Second
		web := &schedWeb{chain: 2, slow: slow}
		tr := &handoffRecorder{
			// No latency pacing: the host is free to start a request as soon
			// as /slow has answered.
			PoliteTransport: polite.New(web,
				polite.WithPacing(pace.Policy{BaseDelay: time.Second, Jitter: pace.None, LatencyFactor: pace.None})),
			at: make(map[string][]time.Time),
		}
		t0 := time.Now()
		go func() {
			resp, err := (&http.Client{Transport: tr.PoliteTransport}).Get("http://b/slow")
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
		}()
		synctest.Wait() // /slow waits for robots.txt, then its turn
		time.Sleep(time.Second)
		synctest.Wait() // /slow is in flight
		c := newCrawler(tr, crawlOptions{maxPages: 100, maxDepth: 20, concurrency: 1}, func(pageRecord) {})
		c.run(context.Background(), []*url.URL{mustParse(t, "http://b/")})

		freed := t0.Add(time.Second + slow)
		var pages []string
		for _, s := range web.starts {
			if s.url == "http://b/slow" {
				continue
			}
			pages = append(pages, s.url)
			if waited := s.at.Sub(tr.at[s.url][0]); waited != 0 {
				t.Errorf("%s waited %v in the transport; want 0", s.url, waited)
			}
			if s.url == "http://b/" && (s.at.Before(freed) || s.at.After(freed.Add(busyPoll))) {
				t.Errorf("b/ started at +%v; want within %v after /slow answered, at +%v", s.at.Sub(t0), busyPoll, freed.Sub(t0))
			}
		}
		if want := []string{"http://b/", "http://b/1", "http://b/2"}; !slices.Equal(pages, want) {
			t.Errorf("pages requested: %q; want %q", pages, want)
		}
	})
}

// TestCrawlerIdleTimeout checks what the idle timeout counts: the time
// since a request last started or ended. 55 URLs of one host paced 1s
// apart are all fetched, well past a timeout of 20s, although no new URL
// comes after the first; a request that hangs stops the crawl 20s after
// it started.
func TestCrawlerIdleTimeout(t *testing.T) {
	const idle = 20 * time.Second
	tests := []struct {
		name      string
		hang      bool // b/hang never answers, and is the last URL
		wantPages int
		wantIdle  bool
	}{
		{"paced URLs", false, 55, false},
		{"a request that hangs", true, 55, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				web := &schedWeb{chain: 100}
				var base http.RoundTripper = web
				if tt.hang {
					base = roundTripFunc(func(req *http.Request) (*http.Response, error) {
						if req.URL.Path == "/hang" {
							<-req.Context().Done()
							return nil, req.Context().Err()
						}
						return web.RoundTrip(req)
					})
				}
				tr := polite.New(base, polite.WithPacing(pace.Policy{BaseDelay: time.Second, Jitter: pace.None, LatencyFactor: pace.None}))
				var mu sync.Mutex
				pages := 0
				c := newCrawler(tr, crawlOptions{maxPages: 1000, maxDepth: 0, concurrency: 4, idleTimeout: idle}, func(r pageRecord) {
					mu.Lock()
					defer mu.Unlock()
					if r.Status == http.StatusOK {
						pages++
					}
				})
				var seeds []*url.URL
				for i := 1; i <= 55; i++ {
					seeds = append(seeds, mustParse(t, fmt.Sprintf("http://b/%d", i)))
				}
				if tt.hang {
					seeds = append(seeds, mustParse(t, "http://b/hang"))
				}
				t0 := time.Now()
				idled := c.run(context.Background(), seeds)
				took := time.Since(t0)

				if pages != tt.wantPages || idled != tt.wantIdle {
					t.Errorf("%d pages fetched, stopped on the idle timeout: %v; want %d, %v", pages, idled, tt.wantPages, tt.wantIdle)
				}
				// robots.txt at 0, then a URL a second; after one that hangs,
				// the idle timeout.
				want := time.Duration(len(seeds)) * time.Second
				if tt.hang {
					want += idle
				}
				if took != want {
					t.Errorf("the crawl took %v; want %v", took, want)
				}
			})
		})
	}
}
