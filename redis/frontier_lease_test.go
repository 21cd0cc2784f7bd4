package politeredis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/frontier"
	"github.com/polite-go/polite/pace"
	"github.com/redis/go-redis/v9"
)

// okWeb is a base RoundTripper that answers every request 200 at once,
// with no links, and records when each started.
type okWeb struct {
	mu     sync.Mutex // guards starts
	starts map[string][]time.Time
}

func (w *okWeb) RoundTrip(req *http.Request) (*http.Response, error) {
	w.mu.Lock()
	if w.starts == nil {
		w.starts = make(map[string][]time.Time)
	}
	w.starts[req.URL.String()] = append(w.starts[req.URL.String()], time.Now())
	w.mu.Unlock()
	status := http.StatusOK
	if req.URL.Path == "/robots.txt" {
		status = http.StatusNotFound
	}
	return &http.Response{StatusCode: status, Body: io.NopCloser(strings.NewReader("")), Request: req}, nil
}

// started returns when requests for rawURL started.
func (w *okWeb) started(rawURL string) []time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Time(nil), w.starts[rawURL]...)
}

// stats returns f's Stats, failing t on an error.
func stats(t *testing.T, f *Frontier) FrontierStats {
	t.Helper()
	s, err := f.Stats(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestFrontierLeaseRunsOut checks a turn's lease on the bubble's clock:
// while its process renews it, no other process gets the host's URL, the
// turn running six times the lease; when the process dies (it renews no
// more), another gets the URL again when the lease runs out, and the
// fleet counts it; the dead process's late Done does not end the new
// turn.
func TestFrontierLeaseRunsOut(t *testing.T) {
	newClient(t) // skips without a server
	synctest.Test(t, func(t *testing.T) {
		c := redis.NewClient(clientOptions(sock))
		defer c.Close()
		const lease = 10 * time.Second
		prefix := freshPrefix()
		web := &okWeb{}
		opts := []polite.Option{polite.WithRobotsMode(polite.RobotsOff)}
		a, _ := testFrontier(c, prefix, web, opts, frontier.Options{}, WithTurnLease(lease))
		b, _ := testFrontier(c, prefix, web, opts, frontier.Options{}, WithTurnLease(lease))
		defer a.Close()
		defer b.Close()
		ctx := context.Background()
		mustQueue(t, a, "http://h/1", "http://h/2")

		// a's turn runs a minute, renewed: b gets the host's next URL
		// only when it ends.
		t0 := time.Now()
		first, err := a.Next(ctx)
		if err != nil || first.URL != "http://h/1" {
			t.Fatalf("a.Next = %q, %v; want http://h/1", first.URL, err)
		}
		time.AfterFunc(time.Minute, first.Done)
		second, err := b.Next(ctx)
		if err != nil || second.URL != "http://h/2" {
			t.Fatalf("b.Next = %q, %v; want http://h/2", second.URL, err)
		}
		if got := time.Since(t0); got < time.Minute || got > time.Minute+b.o.poll {
			t.Errorf("b got the host's next URL at +%v; want when a's turn ended, +1m0s", got)
		}

		// b dies holding http://h/2: a gets it again when the lease runs out.
		b.keep.drop(second.Ref.(*turnRef))
		t1 := time.Now()
		again, err := a.Next(ctx)
		if err != nil || again.URL != "http://h/2" {
			t.Fatalf("a.Next after b died = %q, %v; want http://h/2", again.URL, err)
		}
		if got := time.Since(t1); got < lease || got > lease+a.o.poll {
			t.Errorf("http://h/2 handed out again +%v after b died; want when its lease ran out, +%v", got, lease)
		}
		if s := stats(t, a); s.Redelivered != 1 || s.Leased != 1 || s.Done != 1 {
			t.Errorf("Stats = %+v; want 1 redelivered, 1 leased, 1 done", s)
		}
		second.Done() // b's, late: it ends nothing
		short, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if turn, err := b.Next(short); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("b.Next while a has http://h/2 out = %q, %v; want it to wait", turn.URL, err)
		}
		again.Done()
		if turn, err := b.Next(ctx); !errors.Is(err, frontier.ErrEmpty) {
			t.Errorf("b.Next after the last Done = %q, %v; want ErrEmpty", turn.URL, err)
		}
		if s := stats(t, a); s.Done != 2 || s.Leased != 0 || s.Queued != 0 || s.Redelivered != 1 || s.Added != 2 {
			t.Errorf("Stats = %+v; want 2 done, 1 redelivered, 2 added, none out or queued", s)
		}
	})
}

// mustQueue adds every URL to f, failing t when one is not queued.
func mustQueue(t *testing.T, f frontier.Queue, urls ...string) {
	t.Helper()
	for _, u := range urls {
		if ok, err := f.Add(context.Background(), u); !ok || err != nil {
			t.Fatalf("Add(%s) = %v, %v; want true, nil", u, ok, err)
		}
	}
}

// TestFrontierLearnsPolicy checks that the frontier schedules a host by
// the policy the transport gives it, which it learns from Check: a host
// paced at 3s by a rule, over a frontier whose scripts hold the default
// 1s, is handed out every 3s, and no page waits in the transport.
func TestFrontierLearnsPolicy(t *testing.T) {
	newClient(t)
	synctest.Test(t, func(t *testing.T) {
		c := redis.NewClient(clientOptions(sock))
		defer c.Close()
		web := &okWeb{}
		opts := []polite.Option{
			polite.WithPacing(pace.Policy{Jitter: pace.None, LatencyFactor: pace.None}),
			polite.WithPacingRules(polite.PacingRule{Host: "slow", Policy: pace.Policy{BaseDelay: 3 * time.Second}}),
		}
		f, tr := testFrontier(c, freshPrefix(), web, opts, frontier.Options{})
		defer f.Close()
		for i := range 4 {
			mustQueue(t, f, fmt.Sprintf("http://slow/%d", i))
		}
		client := &http.Client{Transport: tr}
		ctx := context.Background()
		var prev time.Time
		for i := range 4 {
			turn, err := f.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			out := time.Now()
			resp, err := client.Get(turn.URL)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			turn.Done()
			start := web.started(turn.URL)[0]
			if !start.Equal(out) {
				t.Errorf("%s started %v after it was handed out; want at once", turn.URL, start.Sub(out))
			}
			if i > 0 && start.Sub(prev) != 3*time.Second {
				t.Errorf("%s started %v after the one before; want the host's own pace, 3s", turn.URL, start.Sub(prev))
			}
			prev = start
		}
	})
}

// TestFrontierKeepsURLs checks that URLs of a host's several origins,
// its own first and others beside it, come out as they went in.
func TestFrontierKeepsURLs(t *testing.T) {
	newClient(t)
	synctest.Test(t, func(t *testing.T) {
		c := redis.NewClient(clientOptions(sock))
		defer c.Close()
		f, _ := testFrontier(c, freshPrefix(), &okWeb{}, []polite.Option{polite.WithPacing(pace.Policy{BaseDelay: pace.None})}, frontier.Options{})
		defer f.Close()
		urls := []string{"http://a/x?y=1#f", "https://a/y", "http://a:8080/z", "http://a", "http://a?q", "HTTP://a/upper", "http://a/%7Ez", "http://a/"}
		mustQueue(t, f, urls...)
		for _, want := range urls {
			turn, err := f.Next(context.Background())
			if err != nil || turn.URL != want {
				t.Fatalf("Next = %q, %v; want %q", turn.URL, err, want)
			}
			turn.Done()
		}
	})
}
