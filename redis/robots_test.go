package politeredis

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/politetest"
	"github.com/redis/go-redis/v9"
)

// TestRobotsStoreConformance holds the Redis robots store to the cases,
// each store of a fleet on a client of its own, as a process would be.
func TestRobotsStoreConformance(t *testing.T) {
	newClient(t) // skips without a server
	politetest.RunRobotsStore(t, func(t *testing.T) func() polite.RobotsStore {
		prefix := freshPrefix()
		return func() polite.RobotsStore {
			return NewRobotsStore(newClient(t), WithKeyPrefix(prefix), FailWhenUnreachable(), WithPollInterval(5*time.Millisecond))
		}
	})
}

// copyOf returns a fetch's copy for origin o that lives for d.
func copyOf(o string, d time.Duration) *polite.RobotsFetch {
	return &polite.RobotsFetch{URL: o + "/robots.txt", Status: 200, FetchedAt: time.Now(), Body: []byte("User-agent: *\nDisallow: /x\n"), Expires: time.Now().Add(d)}
}

// TestRobotsStoreLapsedClaim: a claim whose process died, and so stops
// renewing it, lapses, and a waiting process fetches in its place.
func TestRobotsStoreLapsedClaim(t *testing.T) {
	c := newClient(t)
	prefix := freshPrefix()
	const o = "https://dead.example:443"
	claim := prefix + ":robots:{dead.example}" + o + ":claim"
	if err := c.Set(context.Background(), claim, "a-dead-process", 300*time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	s := NewRobotsStore(c, WithKeyPrefix(prefix), FailWhenUnreachable(), WithPollInterval(10*time.Millisecond))
	var fetches atomic.Int32
	f, err := s.Load(context.Background(), o, func(ctx context.Context, prev *polite.RobotsFetch) *polite.RobotsFetch {
		fetches.Add(1)
		if holder := c.Get(ctx, claim).Val(); holder == "a-dead-process" {
			t.Errorf("fetched while the dead process's claim held")
		}
		return copyOf(o, time.Hour)
	})
	if err != nil || fetches.Load() != 1 || !bytes.Contains(f.Body, []byte("Disallow: /x")) {
		t.Errorf("Load = %+v, %v after %d fetches; want the file from one fetch", f, err, fetches.Load())
	}
	if n := c.Exists(context.Background(), claim).Val(); n != 0 {
		t.Errorf("the claim is still held after the fetch was shared")
	}
}

// TestRobotsStoreRenewsClaim: the process that fetches renews its claim
// while it fetches, and the others wait for it rather than fetch too.
func TestRobotsStoreRenewsClaim(t *testing.T) {
	c := newClient(t)
	prefix := freshPrefix()
	const o = "https://slow.example:443"
	claim := prefix + ":robots:{slow.example}" + o + ":claim"
	opts := []RobotsOption{WithKeyPrefix(prefix), FailWhenUnreachable(), WithFetchClaim(2 * time.Second), WithPollInterval(20 * time.Millisecond)}
	started, release := make(chan struct{}), make(chan struct{})
	done := make(chan error)
	go func() {
		_, err := NewRobotsStore(newClient(t), opts...).Load(context.Background(), o, func(context.Context, *polite.RobotsFetch) *polite.RobotsFetch {
			close(started)
			<-release
			return copyOf(o, time.Hour)
		})
		done <- err
	}()
	<-started
	var again atomic.Int32
	waited := make(chan *polite.RobotsFetch)
	go func() {
		f, err := NewRobotsStore(newClient(t), opts...).Load(context.Background(), o, func(context.Context, *polite.RobotsFetch) *polite.RobotsFetch {
			again.Add(1)
			return copyOf(o, time.Hour)
		})
		if err != nil {
			t.Error(err)
		}
		waited <- f
	}()

	// The claim's time to live goes down, then up again at a renewal,
	// with the same holder.
	ctx := context.Background()
	holder, last := c.Get(ctx, claim).Val(), c.PTTL(ctx, claim).Val()
	for i := 0; ; i++ {
		time.Sleep(20 * time.Millisecond)
		h, ttl := c.Get(ctx, claim).Val(), c.PTTL(ctx, claim).Val()
		if h != holder {
			t.Fatalf("the claim went from %q to %q while its holder fetched", holder, h)
		}
		if ttl > last {
			break // renewed
		}
		if i == 200 {
			t.Fatal("the claim was not renewed in 4s")
		}
		last = ttl
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if f := <-waited; f == nil || again.Load() != 0 {
		t.Errorf("the waiter fetched %d times; want 0, the claim respected", again.Load())
	}
}

// TestRobotsStoreWaitersTakeExpired: processes that waited for another's
// fetch take its result even when it is already expired, rather than
// fetch again one after another.
func TestRobotsStoreWaitersTakeExpired(t *testing.T) {
	c := newClient(t)
	prefix := freshPrefix()
	const o = "https://expired.example:443"
	opts := []RobotsOption{WithKeyPrefix(prefix), FailWhenUnreachable(), WithPollInterval(5 * time.Millisecond)}
	expired := copyOf(o, -time.Second)
	release := make(chan struct{})
	var fetches atomic.Int32
	fetch := func(context.Context, *polite.RobotsFetch) *polite.RobotsFetch {
		if fetches.Add(1) == 1 {
			<-release
		}
		return expired
	}
	if err := c.ConfigResetStat(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	const procs = 4
	got := make(chan *polite.RobotsFetch, procs)
	for range procs {
		s := NewRobotsStore(newClient(t), opts...)
		go func() {
			f, err := s.Load(context.Background(), o, fetch)
			if err != nil {
				t.Error(err)
			}
			got <- f
		}()
	}
	// Each process has looked once the server has run the load script
	// once for each, the fetch still held; the three waiters then look
	// again and again.
	for i := 0; looks(t, c) < procs+3; i++ {
		if i == 400 {
			t.Fatalf("%d looks in 4s; want each process to have looked", looks(t, c))
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(release)
	for range procs {
		if f := <-got; f == nil || !bytes.Equal(f.Body, expired.Body) {
			t.Errorf("Load = %+v; want the expired copy", f)
		}
	}
	if n := fetches.Load(); n != 1 {
		t.Errorf("%d fetches; want 1, the waiters taking its result", n)
	}
}

// looks returns how many scripts the server has run since its statistics
// were reset.
func looks(t *testing.T, c *redis.Client) int {
	text, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for line := range strings.Lines(text) {
		for _, cmd := range []string{"cmdstat_evalsha:calls=", "cmdstat_eval:calls="} {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(line), cmd); ok {
				k, _ := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
				n += k
			}
		}
	}
	return n
}

// TestRobotsStoreOutage: with Redis stopped, each Load fetches in this
// process, said once; with Redis back, Load shares through it again.
func TestRobotsStoreOutage(t *testing.T) {
	c := newClient(t)
	var log syncBuffer
	prefix := freshPrefix()
	s := NewRobotsStore(c, WithKeyPrefix(prefix), WithTimeout(500*time.Millisecond),
		WithLogger(slog.New(slog.NewTextHandler(&log, nil)))).(*robotsStore)
	s.health.probe = 50 * time.Millisecond
	const o = "https://outage.example:443"
	var fetches atomic.Int32
	load := func(d time.Duration) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err := s.Load(ctx, o, func(context.Context, *polite.RobotsFetch) *polite.RobotsFetch {
			fetches.Add(1)
			return copyOf(o, d)
		})
		if err != nil {
			t.Fatalf("Load = %v", err)
		}
	}

	stopServer()
	t.Cleanup(func() {
		if server == nil {
			restartServer(t)
		}
	})
	for range 5 {
		load(time.Hour)
	}
	if n := fetches.Load(); n != 5 {
		t.Errorf("%d fetches for 5 loads in an outage; want each to fetch in this process", n)
	}
	if got := strings.Count(log.String(), "unreachable"); got != 1 {
		t.Errorf("outage said %d times; want once:\n%s", got, log.String())
	}

	restartServer(t)
	inRedis := func() bool { return c.Exists(context.Background(), prefix+":robots:{outage.example}"+o).Val() == 1 }
	for i := 0; !inRedis(); i++ {
		if i == 20 {
			t.Fatal("the store did not go back to redis")
		}
		time.Sleep(2 * s.health.probe)
		load(time.Hour)
	}
	before := fetches.Load()
	load(time.Hour)
	if n := fetches.Load(); n != before {
		t.Errorf("a Load after recovery fetched; want the copy shared in redis")
	}
	if got := strings.Count(log.String(), "answers again"); got != 1 {
		t.Errorf("recovery said %d times; want once:\n%s", got, log.String())
	}
}

// TestRobotsStoreFailWhenUnreachable: the option fails Load with an error
// that names the store, and fetches nothing.
func TestRobotsStoreFailWhenUnreachable(t *testing.T) {
	c := redis.NewClient(clientOptions("/nonexistent/redis.sock"))
	defer c.Close()
	s := NewRobotsStore(c, FailWhenUnreachable(), WithTimeout(100*time.Millisecond))
	_, err := s.Load(context.Background(), "https://a.example:443", func(context.Context, *polite.RobotsFetch) *polite.RobotsFetch {
		t.Error("fetched with redis unreachable under FailWhenUnreachable")
		return copyOf("https://a.example:443", time.Hour)
	})
	if err == nil || !strings.Contains(err.Error(), "redis unreachable") || !strings.Contains(err.Error(), "a.example") {
		t.Errorf("Load = %v; want an error naming redis and the origin", err)
	}
}

// TestRobotsCodec: every copy decodes to what was encoded, Err as its text,
// and every truncation or extension of one fails to decode rather than
// panics.
func TestRobotsCodec(t *testing.T) {
	at := time.Date(2026, 11, 23, 6, 0, 0, 123456789, time.UTC)
	result := func(url string, status int, err error, stale bool, d time.Duration) polite.RobotsFetch {
		return polite.RobotsFetch{URL: url, Status: status, Err: err, Stale: stale, FetchedAt: at, Duration: d}
	}
	with := func(f polite.RobotsFetch, edit func(*polite.RobotsFetch)) polite.RobotsFetch {
		edit(&f)
		return f
	}
	tests := []polite.RobotsFetch{
		with(result("https://a.example/robots.txt", 200, nil, false, time.Second), func(f *polite.RobotsFetch) {
			f.Body, f.ETag, f.LastModified = []byte("User-agent: *\nDisallow: /\x00\xff"), `"e"`, "x"
		}),
		with(result("http://b.example/robots.txt", 200, nil, false, 0), func(f *polite.RobotsFetch) { f.Body = []byte{} }),
		result("http://c.example/robots.txt", 0, errors.New("dial tcp: refused"), false, -1),
		with(result("http://d.example:8080/robots.txt", 503, fmt.Errorf("wrapped: %w", errors.New("503")), true, 0), func(f *polite.RobotsFetch) { f.Body = []byte("x") }),
	}
	for _, want := range tests {
		b := encodeRobots(&want)
		got, err := decodeRobots(b)
		if err != nil {
			t.Fatalf("decode(encode(%+v)) = %v", want, err)
		}
		if got.URL != want.URL || got.Status != want.Status || !bytes.Equal(got.Body, want.Body) ||
			(got.Body == nil) != (want.Body == nil) || errText(got.Err) != errText(want.Err) || got.Stale != want.Stale ||
			got.ETag != want.ETag || got.LastModified != want.LastModified || !got.FetchedAt.Equal(want.FetchedAt) || got.Duration != want.Duration {
			t.Errorf("decode(encode(x)) = %+v; want %+v", got, want)
		}
		for n := range len(b) {
			if _, err := decodeRobots(b[:n]); err == nil {
				t.Errorf("%q, cut to %d bytes, decoded", b, n)
			}
		}
		if _, err := decodeRobots(append(b, 0)); err == nil {
			t.Errorf("%q with a byte more decoded", b)
		}
	}
}

// errText returns err's text, or "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
