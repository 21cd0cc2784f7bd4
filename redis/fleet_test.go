package politeredis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/pace"
	"github.com/redis/go-redis/v9"
)

// The fleet test runs four processes, this test binary run again with
// fleetEnv set, that crawl three local hosts through one Redis. The hosts
// record what they saw; the test checks the policy across the fleet.
const (
	fleetEnv      = "POLITEREDIS_FLEET_CHILD" // the child's number
	fleetSockEnv  = "POLITEREDIS_FLEET_SOCK"
	fleetHostsEnv = "POLITEREDIS_FLEET_HOSTS"

	fleetProcs    = 4
	fleetWorkers  = 2 // goroutines per host per process
	fleetRequests = 4 // requests per worker
	fleetPace     = 100 * time.Millisecond
	fleetSlow     = 150 * time.Millisecond // host B's latency, above the pace
	fleetRetry    = 2 * time.Second        // host C's Retry-After
)

// startBox is the context key of an *atomic.Int64 that receives the start
// of a request, in µs on the server's clock, when the Pacer admits it.
type startBox struct{}

// stampPacer records each start in the box of its request's context, so
// that the hosts can judge the starts rather than the arrivals, which a
// busy machine delays unevenly.
type stampPacer struct{ pace.Pacer }

func (p stampPacer) Acquire(ctx context.Context, r pace.Request) (pace.Lease, error) {
	l, err := p.Pacer.Acquire(ctx, r)
	if box, ok := ctx.Value(startBox{}).(*atomic.Int64); ok && err == nil {
		if rl, ok := l.Ref.(*lease); ok {
			start, _ := strconv.ParseInt(rl.start, 10, 64)
			box.Store(start)
		}
	}
	return l, err
}

// stampStart is a base RoundTripper that sends the start in its box as
// the X-Fleet-Start header.
func stampStart(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	if box, ok := req.Context().Value(startBox{}).(*atomic.Int64); ok {
		r.Header.Set("X-Fleet-Start", strconv.FormatInt(box.Load(), 10))
	}
	return http.DefaultTransport.RoundTrip(r)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// fleetChild is a process of the fleet: it crawls every host with
// fleetWorkers goroutines and returns its exit code.
func fleetChild() int {
	c := redis.NewClient(clientOptions(os.Getenv(fleetSockEnv)))
	defer c.Close()
	newPacer := NewPacer(c, WithKeyPrefix("fleet"), FailWhenUnreachable())
	tr := polite.New(roundTripFunc(stampStart),
		polite.WithPacer(func(p pace.Config) pace.Pacer { return stampPacer{newPacer(p)} }),
		polite.WithRobotsStore(NewRobotsStore(c, WithKeyPrefix("fleet"), FailWhenUnreachable(), WithPollInterval(10*time.Millisecond))),
		polite.WithPacingKey(polite.PacingKeyOrigin),
		polite.WithPacing(pace.Policy{BaseDelay: fleetPace, Jitter: pace.None, LatencyFactor: pace.None,
			BackoffBase: time.Second, MaxBackoff: time.Minute, MaxInFlight: 1}))
	client := &http.Client{Transport: tr}
	var (
		wg     sync.WaitGroup
		failed sync.Once
		code   int
	)
	for _, host := range strings.Fields(os.Getenv(fleetHostsEnv)) {
		wg.Go(func() {
			// The robots.txt that the fleet shares binds here too.
			req, _ := http.NewRequest("GET", host+"/private", nil)
			if _, err := client.Do(req); !errors.Is(err, polite.ErrRobotsBlocked) {
				fmt.Fprintf(os.Stderr, "%s/private: %v; want polite.ErrRobotsBlocked\n", host, err)
				failed.Do(func() { code = 1 })
			}
		})
		for range fleetWorkers {
			wg.Go(func() {
				for range fleetRequests {
					ctx := context.WithValue(context.Background(), startBox{}, new(atomic.Int64))
					req, _ := http.NewRequestWithContext(ctx, "GET", host+"/page", nil)
					req.Header.Set("X-Fleet-Process", os.Getenv(fleetEnv))
					resp, err := client.Do(req)
					if err != nil {
						fmt.Fprintln(os.Stderr, err)
						failed.Do(func() { code = 1 })
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			})
		}
	}
	wg.Wait()
	return code
}

// A visit is a request as a host saw it.
type visit struct {
	proc    string
	start   time.Time // the Pacer's start, on the server's clock: the wall clock of this machine
	arrival time.Time
	end     time.Time
	status  int
}

// fleetHost is a local host that records its visits.
type fleetHost struct {
	mu       sync.Mutex // protects visits and inFlight
	visits   []visit
	inFlight int
	most     int // the most requests in flight at once
	robots   atomic.Int32
}

func (h *fleetHost) handler(latency time.Duration, status func(n int) int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			h.robots.Add(1)
			io.WriteString(w, "User-agent: *\nDisallow: /private\n")
			return
		case "/page":
		default:
			http.NotFound(w, r)
			return
		}
		start, _ := strconv.ParseInt(r.Header.Get("X-Fleet-Start"), 10, 64)
		v := visit{proc: r.Header.Get("X-Fleet-Process"), start: time.UnixMicro(start), arrival: time.Now(), status: http.StatusOK}
		h.mu.Lock()
		h.inFlight++
		h.most = max(h.most, h.inFlight)
		if status != nil {
			v.status = status(len(h.visits))
		}
		h.mu.Unlock()
		time.Sleep(latency) // a slow server, not a test's wait
		v.end = time.Now()
		h.mu.Lock()
		h.inFlight--
		h.visits = append(h.visits, v)
		h.mu.Unlock()
		if v.status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", fmt.Sprint(int(fleetRetry.Seconds())))
		}
		w.WriteHeader(v.status)
	}
}

func TestFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("runs four processes for seconds")
	}
	c := newClient(t) // skips without a server
	var a, b, cc fleetHost
	srvA := httptest.NewServer(a.handler(0, nil))
	defer srvA.Close()
	srvB := httptest.NewServer(b.handler(fleetSlow, nil))
	defer srvB.Close()
	srvC := httptest.NewServer(cc.handler(0, func(n int) int {
		if n == 2 { // the third request
			return http.StatusTooManyRequests
		}
		return http.StatusOK
	}))
	defer srvC.Close()
	for _, u := range []string{srvA.URL, srvB.URL, srvC.URL} {
		c.Del(t.Context(), "fleet:{"+u+"}", "fleet:robots:{127.0.0.1}"+u)
	}

	var procs []*exec.Cmd
	for i := range fleetProcs {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), fleetEnv+"="+fmt.Sprint(i), fleetSockEnv+"="+sock,
			fleetHostsEnv+"="+strings.Join([]string{srvA.URL, srvB.URL, srvC.URL}, " "))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, cmd)
	}
	for i, cmd := range procs {
		if err := cmd.Wait(); err != nil {
			t.Errorf("process %d: %v", i, err)
		}
	}

	srvA.Close() // waits for the handlers
	srvB.Close()
	srvC.Close()
	want := fleetProcs * fleetWorkers * fleetRequests
	for _, h := range []struct {
		name string
		h    *fleetHost
	}{{"A", &a}, {"B", &b}, {"C", &cc}} {
		h.h.mu.Lock()
		vs := slices.Clone(h.h.visits)
		most := h.h.most
		h.h.mu.Unlock()
		slices.SortFunc(vs, func(x, y visit) int { return x.start.Compare(y.start) })
		procs := map[string]bool{}
		minArrival := time.Duration(1<<63 - 1)
		for i, v := range vs {
			procs[v.proc] = true
			if i > 0 {
				minArrival = min(minArrival, v.arrival.Sub(vs[i-1].arrival))
				if gap := v.start.Sub(vs[i-1].start); gap < fleetPace {
					t.Errorf("host %s: starts %d and %d (processes %s, %s) %v apart; want at least %v",
						h.name, i-1, i, vs[i-1].proc, v.proc, gap, fleetPace)
				}
			}
		}
		if len(vs) != want || len(procs) != fleetProcs {
			t.Errorf("host %s: %d requests from %d processes; want %d from %d", h.name, len(vs), len(procs), want, fleetProcs)
		}
		t.Logf("host %s: least gap between arrivals %v, between starts at least %v", h.name, minArrival, fleetPace)
		if most != 1 {
			t.Errorf("host %s: %d requests in flight at once; want 1", h.name, most)
		}
		if n := h.h.robots.Load(); n != 1 {
			t.Errorf("host %s: robots.txt fetched %d times by %d processes; want once", h.name, n, fleetProcs)
		}
	}

	// Host C: after the 429, no process starts a request before its
	// Retry-After has passed. The pause runs from the 429's release, after
	// the host's handler ended.
	var paused time.Time
	after := map[string]bool{}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	slices.SortFunc(cc.visits, func(x, y visit) int { return x.start.Compare(y.start) })
	for _, v := range cc.visits {
		switch {
		case v.status == http.StatusTooManyRequests:
			paused = v.end.Add(fleetRetry)
		case !paused.IsZero():
			after[v.proc] = true
			if v.start.Before(paused) {
				t.Errorf("host C: process %s started %v before the Retry-After ended", v.proc, paused.Sub(v.start))
			}
		}
	}
	if paused.IsZero() || len(after) != fleetProcs {
		t.Errorf("host C: %d processes requested after the 429; want all %d", len(after), fleetProcs)
	}
}
