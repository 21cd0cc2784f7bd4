package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
)

// TestInterruptible sends signals to the watch that main sets up: the first
// ends the context, the second exits at once with 130.
func TestInterruptible(t *testing.T) {
	tests := []struct {
		name     string
		signals  int
		wantDone bool // the context ended before stop
		wantExit []int
	}{
		{"none", 0, false, nil},
		{"one: the command stops and reports", 1, true, nil},
		{"two: exit at once", 2, true, []int{exitInterrupted}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sigs := make(chan os.Signal)
				var exits []int
				ctx, stop := interruptible(context.Background(), sigs, func(code int) { exits = append(exits, code) })
				for range tt.signals {
					sigs <- os.Interrupt
				}
				synctest.Wait()
				if done := ctx.Err() != nil; done != tt.wantDone {
					t.Errorf("context ended: %v; want %v", done, tt.wantDone)
				}
				stop()
				synctest.Wait()
				if ctx.Err() == nil {
					t.Error("the context outlives stop")
				}
				if !slices.Equal(exits, tt.wantExit) {
					t.Errorf("exit called with %v; want %v", exits, tt.wantExit)
				}
			})
		})
	}
}

// hangSite is a site whose page /hang, and whose robots.txt when hangRobots
// is set, answer only when their request ends. The first request for
// either closes arrived. Its other pages: / links to /a and /hang, and /a
// links nowhere; robots.txt is otherwise 404.
func hangSite(t *testing.T, hangRobots bool) (url string, arrived <-chan struct{}) {
	t.Helper()
	came := make(chan struct{})
	var once sync.Once
	release := make(chan struct{})
	hang := func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(came) })
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", htmlPage("/a", "/hang"))
	mux.HandleFunc("/a", htmlPage())
	mux.HandleFunc("/hang", hang)
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		if hangRobots {
			hang(w, r)
			return
		}
		http.NotFound(w, r)
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	t.Cleanup(func() { close(release) }) // first: a request left hanging ends
	return s.URL, came
}

// cancelWriter is a buffer that calls cancel once what was written to it
// contains at.
type cancelWriter struct {
	mu     sync.Mutex
	b      bytes.Buffer
	at     string
	cancel context.CancelFunc
}

func (w *cancelWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.b.Write(p)
	if w.at != "" && strings.Contains(w.b.String(), w.at) {
		w.cancel()
	}
	return n, err
}

func (w *cancelWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestInterrupt interrupts each command in process, as the first SIGINT
// does, while a request hangs or at a line it prints: it must stop, say
// what it did, write its timeline, and exit with 130.
func TestInterrupt(t *testing.T) {
	svg := filepath.Join(t.TempDir(), "timeline.svg")
	tests := []struct {
		name       string
		hangRobots bool
		args       func(site string) []string
		stdoutAt   string // cancel when stdout has it; otherwise when the site's request hangs
		wantStdout []string
		wantStderr []string // regular expressions, in order
		timeline   bool
	}{
		{
			name: "crawl",
			args: func(site string) []string {
				return []string{"crawl", "-delay", "0", "-concurrency", "1", "-timeline", svg, site + "/"}
			},
			wantStdout: []string{`"url":"http://127.0.0.1:\d+/",`, `"url":"http://127.0.0.1:\d+/a",`},
			wantStderr: []string{`(?m)^host\s+requests`, `(?m)^127\.0\.0\.1\s+4\s`, `(?m)^4 requests, 0 refused by robots.txt, in `,
				`polite crawl: interrupted; URLs still to crawl: 1\n$`},
			timeline: true,
		},
		{
			name: "get",
			args: func(site string) []string {
				return []string{"get", "-delay", "0", site + "/a", site + "/hang", site + "/a?again"}
			},
			wantStderr: []string{`(?m)^200\s+\S+/a  waited`, `(?m)^stopped  \S+/hang  interrupted$`,
				`polite get: interrupted; URLs not fetched: 2 of 3\n$`},
		},
		{
			name:       "check",
			hangRobots: true,
			args:       func(site string) []string { return []string{"check", site + "/a"} },
			wantStderr: []string{`^polite check: interrupted\n$`},
		},
		{
			name:       "demo",
			args:       func(string) []string { return []string{"demo", "-fast", "-timeline", svg} },
			stdoutAt:   "crawling 3 seeds...",
			wantStdout: []string{`(?m)^host\s+requests`, `(?m)^timeline written to `, `polite demo: interrupted, so no verdict\n$`},
			timeline:   true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(svg)
			site, arrived := hangSite(t, tt.hangRobots)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			stdout := &cancelWriter{at: tt.stdoutAt, cancel: cancel}
			if tt.stdoutAt == "" {
				go func() {
					select {
					case <-arrived:
						cancel()
					case <-ctx.Done():
					}
				}()
			}
			var stderr bytes.Buffer
			code := run(ctx, tt.args(site), stdout, &stderr)
			if code != exitInterrupted {
				t.Errorf("exit status = %d; want %d", code, exitInterrupted)
			}
			matchInOrder(t, "stdout", stdout.String(), tt.wantStdout)
			matchInOrder(t, "stderr", stderr.String(), tt.wantStderr)
			b, err := os.ReadFile(svg)
			if tt.timeline && (err != nil || !bytes.Contains(b, []byte("<svg"))) {
				t.Errorf("timeline: %v, %d bytes; want an SVG", err, len(b))
			}
		})
	}
}

// matchInOrder checks that out matches each pattern, each after the one
// before.
func matchInOrder(t *testing.T, name, out string, patterns []string) {
	t.Helper()
	rest := out
	for _, p := range patterns {
		loc := regexp.MustCompile(p).FindStringIndex(rest)
		if loc == nil {
			t.Errorf("%s lacks %s after what came before:\n%s", name, p, out)
			return
		}
		rest = rest[loc[1]:]
	}
}
