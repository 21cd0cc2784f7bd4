package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// startRedis starts a redis-server on a loopback port, stopped by its
// process id when t ends, and returns its address. Without redis-server
// the test skips, unless CI=true: then it fails.
func startRedis(t testing.TB) string {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %v", err)
		}
		t.Skip(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := "127.0.0.1:" + strconv.Itoa(port)
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	for i := 0; c.Ping(context.Background()).Err() != nil; i++ {
		if i == 500 {
			t.Fatal("redis-server did not answer PING")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return addr
}

// TestFleet runs three processes of a fleet, in this one, over a site of
// 30 pages: the fleet fetches each page once, and none that robots.txt
// disallows.
func TestFleet(t *testing.T) {
	addr := startRedis(t)
	var mu sync.Mutex
	hits := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
			return
		}
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/p"))
		for _, next := range []int{2*n + 1, 2*n + 2} {
			if next < 30 {
				fmt.Fprintf(w, `<a href="/p%d">page</a> `, next)
			}
		}
		fmt.Fprint(w, `<a href="/private/x">secret</a>`)
	}))
	defer srv.Close()

	var wg sync.WaitGroup
	outs := make([]bytes.Buffer, 3)
	for i := range outs {
		wg.Go(func() {
			var stderr bytes.Buffer
			code := run(context.Background(), []string{"-redis", addr, "-status", "", "-delay", "10ms", "-workers", "2",
				srv.URL + "/p0"}, &outs[i], &stderr)
			if code != 0 {
				t.Errorf("process %d exited with %d:\n%s", i, code, stderr.String())
			}
		})
	}
	wg.Wait()
	for i := range 30 {
		if got := hits[fmt.Sprintf("/p%d", i)]; got != 1 {
			t.Errorf("/p%d fetched %d times by the fleet; want once", i, got)
		}
	}
	if hits["/private/x"] != 0 {
		t.Errorf("/private/x fetched %d times; robots.txt disallows it", hits["/private/x"])
	}
	refused := 0
	for i := range outs {
		refused += strings.Count(outs[i].String(), "refused")
	}
	if refused != 1 {
		t.Errorf("the fleet printed %d refusals; want 1, for /private/x", refused)
	}
}

// cancelAfter is a writer that cancels a context at its second line: a
// process of one worker has added the links of its first page by then.
type cancelAfter struct {
	mu     sync.Mutex
	b      bytes.Buffer
	cancel context.CancelFunc
}

func (w *cancelAfter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if bytes.Count(w.b.Bytes(), []byte("\n")) == 1 {
		w.cancel()
	}
	return w.b.Write(p)
}

// TestFleetJoins runs one process of a fleet of one worker until it has
// fetched the seed page and one of its links, and stops it; then another
// process, started with the same seed, crawls the rest from the fleet's
// frontier, though it added nothing itself: every page is fetched once by
// the two.
func TestFleetJoins(t *testing.T) {
	addr := startRedis(t)
	var mu sync.Mutex
	hits := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		if r.URL.Path == "/" {
			for i := range 10 {
				fmt.Fprintf(w, `<a href="/p%d">page</a> `, i)
			}
		}
	}))
	defer srv.Close()
	args := []string{"-redis", addr, "-status", "", "-delay", "10ms", "-workers", "1", srv.URL + "/"}

	ctx, cancel := context.WithCancel(context.Background())
	first := &cancelAfter{cancel: cancel}
	var stderr bytes.Buffer
	if code := run(ctx, args, first, &stderr); code != 0 {
		t.Fatalf("the first process exited with %d:\n%s", code, stderr.String())
	}
	var second bytes.Buffer
	if code := run(context.Background(), args, &second, &stderr); code != 0 {
		t.Fatalf("the second process exited with %d:\n%s", code, stderr.String())
	}
	if got := strings.Count(first.b.String(), "\n"); got != 2 {
		t.Errorf("the first process fetched %d pages; want 2, the seed and a link:\n%s", got, first.b.String())
	}
	if got := strings.Count(second.String(), "\n"); got != 9 {
		t.Errorf("the second process fetched %d pages; want the 9 left of the 10 the first found:\n%s", got, second.String())
	}
	for path, n := range hits {
		if n != 1 {
			t.Errorf("%s fetched %d times; want once", path, n)
		}
	}
	if len(hits) != 11 {
		t.Errorf("%d pages fetched; want 11", len(hits))
	}
}

// TestStatusPage reads the status page of a process while it holds a
// page's turn: the fleet's frontier overall and per host, queued, leased
// and done.
func TestStatusPage(t *testing.T) {
	addr := startRedis(t)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/":
			fmt.Fprint(w, `<a href="/a">a</a> <a href="/b">b</a>`)
		default:
			<-release // the turn stays out while the test reads the page
		}
	}))
	defer srv.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	status := l.Addr().String()
	l.Close()
	done := make(chan int)
	var out bytes.Buffer
	go func() {
		done <- run(context.Background(), []string{"-redis", addr, "-status", status, "-delay", "10ms", "-workers", "1", srv.URL + "/"},
			&out, io.Discard)
	}()
	var page string
	for i := 0; !strings.Contains(page, "1 leased, 1 done"); i++ {
		if i == 500 {
			t.Fatalf("status page:\n%s\nwant the seed done and a link out", page)
		}
		time.Sleep(10 * time.Millisecond)
		if resp, err := http.Get("http://" + status); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			page = string(b)
		}
	}
	close(release)
	<-done
	if want := "fleet: 3 pages added of 1000; 1 queued, 1 leased, 1 done, 0 refused by robots.txt, 0 handed out again"; !strings.Contains(page, want) {
		t.Errorf("status page:\n%s\nwant it to say %q", page, want)
	}
	row := false
	for line := range strings.Lines(page) {
		if f := strings.Fields(line); len(f) >= 5 && f[0] == "127.0.0.1" {
			row = true
			if got := strings.Join(f[1:5], " "); got != "1 1 1 0" {
				t.Errorf("host row %q: queued, leased, done, refused %s; want 1 1 1 0", line, got)
			}
		}
	}
	if !row {
		t.Errorf("status page:\n%s\nwant a row for the host, 127.0.0.1", page)
	}
}
