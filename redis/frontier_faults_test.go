package politeredis

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/frontier"
	"github.com/polite-go/polite/pace"
	"github.com/redis/go-redis/v9"
)

// unpacedFrontier returns a Frontier on client with a fresh prefix, over a
// transport of web that paces nothing and reads no robots.txt, with
// fopts: a frontier whose every host is ready, to test what Redis does
// to it. Its scripts read the server's clock.
func unpacedFrontier(client redis.UniversalClient, prefix string, web http.RoundTripper, fopts ...FrontierOption) (*Frontier, *polite.PoliteTransport) {
	tr := polite.New(web, polite.WithRobotsMode(polite.RobotsOff),
		polite.WithPacing(pace.Policy{BaseDelay: pace.None, LatencyFactor: pace.None, Jitter: pace.None}),
		polite.WithPacer(NewPacer(client, WithKeyPrefix(prefix))))
	return NewFrontier(client, tr, frontier.Options{}, append([]FrontierOption{WithKeyPrefix(prefix)}, fopts...)...), tr
}

// drain takes URLs from f and ends each turn with Done, until f is empty
// or ctx ends, and returns them.
func drain(t *testing.T, ctx context.Context, f *Frontier) []string {
	t.Helper()
	var got []string
	for {
		turn, err := f.Next(ctx)
		if errors.Is(err, frontier.ErrEmpty) {
			return got
		}
		if err != nil {
			t.Fatalf("Next after %d URLs: %v", len(got), err)
		}
		got = append(got, turn.URL)
		turn.Done()
	}
}

// urlsOf returns n URLs over hosts hosts.
func urlsOf(n, hosts int) []string {
	var urls []string
	for i := range n {
		urls = append(urls, fmt.Sprintf("http://h%d.test/%d", i%hosts, i))
	}
	return urls
}

// TestFrontierStoppedServer stops the server (SIGSTOP) while a crawl has
// turns out: Add fails within its context, with an error that names Redis
// or the context; Next waits through the outage and fails only when its
// context ends, with the context's error joined by one that names Redis;
// a Done of the outage is taken when the server resumes. Then the crawl
// goes on: every URL that Add acknowledged is handed out, none twice.
func TestFrontierStoppedServer(t *testing.T) {
	c := hungClient(t)
	f, _ := unpacedFrontier(c, freshPrefix(), &okWeb{}, WithTimeout(300*time.Millisecond))
	defer f.Close()
	f.o.probe = 100 * time.Millisecond
	acked := urlsOf(20, 4)
	mustQueue(t, f, acked...)
	ctx := context.Background()
	t1, err := f.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t2, err := f.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}

	resume := stopped(t)
	actx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if ok, err := f.Add(actx, "http://h9.test/unacked"); ok || !errors.Is(err, ErrUnreachable) && !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Add on a stopped server = %v, %v; want an error naming redis or the context", ok, err)
	}
	nctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if turn, err := f.Next(nctx); !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrUnreachable) {
		t.Errorf("Next on a stopped server = %q, %v; want the context's deadline, and redis named", turn.URL, err)
	}
	t1.Done() // Redis does not take it now: tried again in the background
	resume()
	t2.Done()

	dctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	handed := append(drain(t, dctx, f), t1.URL, t2.URL)
	handed = slices.DeleteFunc(handed, func(u string) bool { return u == "http://h9.test/unacked" }) // queued when the server resumed, or not
	slices.Sort(handed)
	want := slices.Clone(acked)
	slices.Sort(want)
	if !slices.Equal(handed, want) {
		t.Errorf("handed out %d URLs, %q; want the %d acknowledged, each once", len(handed), handed, len(want))
	}
	if s := stats(t, f); s.Redelivered != 0 || s.Leased != 0 || s.Queued != 0 {
		t.Errorf("Stats after the crawl = %+v; want nothing redelivered, out or queued", s)
	}
}

// startPersistent starts a redis-server that writes every command to its
// append-only file before it answers, in dir, on a unix socket there, and
// returns its process; it stops it by its process id when t ends.
func startPersistent(t *testing.T, dir string) *exec.Cmd {
	t.Helper()
	bin := needBinary(t, "redis-server")
	path := filepath.Join(dir, "r.sock")
	os.Remove(path)
	cmd := exec.Command(bin, "--port", "0", "--unixsocket", path, "--unixsocketperm", "700", "--dir", dir,
		"--save", "", "--appendonly", "yes", "--appendfsync", "always")
	cmd.SysProcAttr = serverProcAttr()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	c := redis.NewClient(clientOptions(path))
	defer c.Close()
	for i := 0; c.Ping(context.Background()).Err() != nil; i++ {
		if i == 500 {
			t.Fatal("redis-server did not answer PING")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return cmd
}

// TestFrontierRestartedServer kills the server (SIGKILL) with turns out
// and restarts it from its append-only file, written before each
// acknowledgement: a new process finds every URL that Add acknowledged,
// the URLs that were out once their leases run out.
func TestFrontierRestartedServer(t *testing.T) {
	dir := t.TempDir()
	srv := startPersistent(t, dir)
	c := redis.NewClient(clientOptions(filepath.Join(dir, "r.sock")))
	defer c.Close()
	prefix := freshPrefix()
	f, _ := unpacedFrontier(c, prefix, &okWeb{}, WithTurnLease(time.Second))
	acked := urlsOf(30, 6)
	mustQueue(t, f, acked...)
	ctx := context.Background()
	for range 3 {
		if _, err := f.Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
	f.Close() // its process dies with the server

	srv.Process.Kill()
	srv.Wait()
	startPersistent(t, dir)
	g, _ := unpacedFrontier(c, prefix, &okWeb{})
	defer g.Close()
	dctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	handed := drain(t, dctx, g)
	slices.Sort(handed)
	want := slices.Clone(acked)
	slices.Sort(want)
	if !slices.Equal(handed, want) {
		t.Errorf("after the restart, handed out %d URLs; want the %d acknowledged, each once:\n%q", len(handed), len(want), handed)
	}
	if s := stats(t, g); s.Redelivered != 3 {
		t.Errorf("Stats = %+v; want the 3 URLs out at the kill redelivered", s)
	}
}

// The process that TestFrontierCrashedProcess kills: it takes a turn and
// the only slot of its host, as a worker does between the Pacer's
// admission and the response, says so, and hangs.
const (
	frontierCrashEnv  = "POLITEREDIS_FRONTIER_CRASH" // the key prefix
	frontierCrashSock = "POLITEREDIS_FRONTIER_SOCK"
	frontierCrashTime = 2 * time.Second // the leases of the crash test, turns' and slots'
)

// frontierCrashPolicy is the policy of the crash test: one request in
// flight a host, no pace.
func frontierCrashPolicy() pace.Policy {
	return pace.Policy{BaseDelay: pace.None, LatencyFactor: pace.None, Jitter: pace.None, MaxInFlight: 1}
}

// frontierCrashPeer returns a process of the crash test's fleet.
func frontierCrashPeer(client redis.UniversalClient, prefix string) (*Frontier, *polite.PoliteTransport) {
	tr := polite.New(&okWeb{}, polite.WithRobotsMode(polite.RobotsOff), polite.WithPacing(frontierCrashPolicy()),
		polite.WithPacer(NewPacer(client, WithKeyPrefix(prefix), WithLeaseDuration(frontierCrashTime))))
	return NewFrontier(client, tr, frontier.Options{}, WithKeyPrefix(prefix), WithTurnLease(frontierCrashTime)), tr
}

func frontierCrashChild() int {
	c := redis.NewClient(clientOptions(os.Getenv(frontierCrashSock)))
	prefix := os.Getenv(frontierCrashEnv)
	f, _ := frontierCrashPeer(c, prefix)
	p := NewPacer(c, WithKeyPrefix(prefix), WithLeaseDuration(frontierCrashTime))(pace.Config{Policy: frontierCrashPolicy().Effective()})
	turn, err := f.Next(context.Background())
	if err != nil {
		fmt.Println(err)
		return 1
	}
	if _, err := p.Acquire(context.Background(), pace.Request{Key: "h.test"}); err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Println(turn.URL)
	select {}
}

// TestFrontierCrashedProcess kills (SIGKILL) a process that holds a turn
// and its host's only slot: another process gets the URL again once the
// turn's lease has run out, by the server's clock, and fetches it once the
// slot's lease has run out, within seconds rather than minutes.
func TestFrontierCrashedProcess(t *testing.T) {
	c := newClient(t)
	prefix := freshPrefix()
	f, tr := frontierCrashPeer(c, prefix)
	defer f.Close()
	mustQueue(t, f, "http://h.test/1")

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), frontierCrashEnv+"="+prefix, frontierCrashSock+"="+sock)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	cmd.Process.Kill()
	cmd.Wait()
	if line != "http://h.test/1\n" {
		t.Fatalf("the child said %q; want the URL it took", line)
	}
	_, hash, _, _ := f.hostKeys("h.test")
	leaseEnd, err := c.HGet(context.Background(), hash, "x").Int64()
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	turn, err := f.Next(ctx)
	if err != nil || turn.URL != "http://h.test/1" {
		t.Fatalf("Next after the child died = %q, %v; want http://h.test/1", turn.URL, err)
	}
	now, err := c.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if now.UnixMicro() < leaseEnd {
		t.Errorf("the URL was handed out again before its lease ran out, by the server's clock")
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, turn.URL, nil)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatalf("fetching the dead process's URL: %v; want its host's slot free once its lease ran out", err)
	}
	resp.Body.Close()
	turn.Done()
	if s := stats(t, f); s.Redelivered != 1 || s.Done != 1 {
		t.Errorf("Stats = %+v; want 1 redelivered, 1 done", s)
	}
}
