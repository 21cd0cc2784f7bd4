package main

import (
	"bytes"
	"context"
	"fmt"
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
func startRedis(t *testing.T) string {
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
