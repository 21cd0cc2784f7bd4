package polite

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/polite-go/polite/pace"
)

// recordingPacer is a Pacer that notes when each admission returns: the
// moment the pacer keeps the pace from, as near as a Pacer outside it can
// see it.
type recordingPacer struct {
	pace.Pacer

	mu     sync.Mutex // guards starts
	starts map[string][]time.Time
}

func (r *recordingPacer) Acquire(ctx context.Context, req pace.Request) (pace.Lease, error) {
	l, err := r.Pacer.Acquire(ctx, req)
	if err == nil {
		at := time.Now()
		r.mu.Lock()
		r.starts[req.Key] = append(r.starts[req.Key], at)
		r.mu.Unlock()
	}
	return l, err
}

// callRecorder is a base transport that notes when it is called for each
// host: the start as the network sees it.
type callRecorder struct {
	base http.RoundTripper

	mu    sync.Mutex // guards calls
	calls map[string][]time.Time
}

func (c *callRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	at := time.Now()
	c.mu.Lock()
	c.calls[req.URL.Hostname()] = append(c.calls[req.URL.Hostname()], at)
	c.mu.Unlock()
	return c.base.RoundTrip(req)
}

// gapFigures reports the gaps between the sorted times of each host in
// byHost whose name has prefix, against gap, as metrics named name-….
func gapFigures(b *testing.B, name, prefix string, byHost map[string][]time.Time, gap time.Duration) {
	var gaps []time.Duration
	for host, ts := range byHost {
		if !strings.HasPrefix(host, prefix) {
			continue
		}
		ts = slices.Clone(ts)
		slices.SortFunc(ts, time.Time.Compare)
		for i := 1; i < len(ts); i++ {
			gaps = append(gaps, ts[i].Sub(ts[i-1]))
		}
	}
	if len(gaps) == 0 {
		b.Fatalf("%s: no gaps", name)
	}
	slices.Sort(gaps)
	below := 0
	for _, g := range gaps {
		if g < gap {
			below++
		}
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(float64(below), name+"-below-pace")
	b.ReportMetric(ms(gaps[0]-gap), name+"-min-minus-pace-ms")
	b.ReportMetric(ms(gaps[len(gaps)/2]-gap), name+"-median-minus-pace-ms")
}

// BenchmarkPacingPrecision measures on the wall clock, against a loopback
// server, the start-to-start gaps of 200 requests to one host paced at
// 20 ms with jitter 0, sent by 64 goroutines queued on it, while 1,000
// other hosts are crawled too, each at its Crawl-delay of 1 s by two
// goroutines. It reports the gaps between the pacer's admissions ("admit",
// what the pacer guarantees) and between the calls of the base transport
// ("call", which a goroutine descheduled between the two can shorten), for
// the one host ("focal") and the others pooled. One iteration takes about
// six seconds: run it with -benchtime 1x.
func BenchmarkPacingPrecision(b *testing.B) {
	const (
		gap        = 20 * time.Millisecond
		gaps       = 200
		queued     = 64
		others     = 1000
		crawlDelay = time.Second
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" && strings.HasPrefix(r.Host, "other-") {
			fmt.Fprintf(w, "User-agent: *\nCrawl-delay: %g\n", crawlDelay.Seconds())
			return
		}
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	var dialer net.Dialer
	for b.Loop() {
		base := &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return dialer.DialContext(ctx, network, addr) // every host is the server
			},
			MaxIdleConnsPerHost: 4,
		}
		calls := &callRecorder{base: base, calls: map[string][]time.Time{}}
		var admits *recordingPacer
		tr := New(calls, WithUserAgent(benchUA), WithPacing(pace.Policy{BaseDelay: gap, Jitter: pace.None}), WithLimits(Limits{MaxKeys: 2 * others, MaxOrigins: 2 * others}),
			WithPacer(func(c pace.Config) pace.Pacer {
				p, err := pace.NewMemory(c)
				if err != nil {
					b.Fatal(err)
				}
				admits = &recordingPacer{Pacer: p, starts: map[string][]time.Time{}}
				return admits
			}))
		client := &http.Client{Transport: tr}
		get := func(u string) {
			if resp, err := client.Get(u); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}

		stop := make(chan struct{})
		var bg sync.WaitGroup
		for h := range others {
			for range 2 {
				bg.Go(func() {
					for i := 0; ; i++ {
						select {
						case <-stop:
							return
						default:
						}
						get(fmt.Sprintf("http://other-%d.example/page/%d", h, i))
					}
				})
			}
		}
		time.Sleep(crawlDelay + time.Second) // past the robots.txt fetches and first pages

		var issued atomic.Int64
		var focal sync.WaitGroup
		for range queued {
			focal.Go(func() {
				for i := issued.Add(1); i <= gaps; i = issued.Add(1) { // and the robots.txt fetch: gaps gaps
					get(fmt.Sprintf("http://focal.example/page/%d", i))
				}
			})
		}
		focal.Wait()
		close(stop)
		bg.Wait()
		base.CloseIdleConnections()

		admits.mu.Lock()
		calls.mu.Lock()
		gapFigures(b, "focal-admit", "focal.", admits.starts, gap)
		gapFigures(b, "focal-call", "focal.", calls.calls, gap)
		gapFigures(b, "others-admit", "other-", admits.starts, crawlDelay)
		gapFigures(b, "others-call", "other-", calls.calls, crawlDelay)
		calls.mu.Unlock()
		admits.mu.Unlock()
	}
}
