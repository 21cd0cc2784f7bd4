package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// runCmd runs the command line args in process.
func runCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(t.Context(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// A testSite is an httptest server with a robots.txt and a few pages. It
// counts the requests to each request URI.
type testSite struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

// newTestSite serves robots at /robots.txt (404 when empty) and the
// handlers of pages by path; other paths get 404.
func newTestSite(t *testing.T, robots string, pages map[string]http.HandlerFunc) *testSite {
	t.Helper()
	s := &testSite{hits: make(map[string]int)}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.RequestURI()]++
		s.mu.Unlock()
		if r.URL.Path == "/robots.txt" {
			if robots == "" {
				http.NotFound(w, r)
				return
			}
			fmt.Fprint(w, robots)
			return
		}
		if h, ok := pages[r.URL.Path]; ok {
			h(w, r)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// hit returns how many requests came for the request URI uri.
func (s *testSite) hit(uri string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[uri]
}

// htmlPage answers with an HTML page linking to each of links.
func htmlPage(links ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!doctype html><html><body>")
		for _, l := range links {
			fmt.Fprintf(w, "<a href=%q>%s</a>", l, l)
		}
		fmt.Fprint(w, "</body></html>")
	}
}

// text answers with body as plain text.
func text(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, body)
	}
}

func TestRunDispatch(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{"no arguments", nil, exitError, "", "Usage:\n\n\tpolite check "},
		{"help", []string{"help"}, exitOK, "Usage:\n\n\tpolite check ", ""},
		{"-h", []string{"-h"}, exitOK, "Exit status:", ""},
		{"unknown command", []string{"fetch"}, exitError, "", `unknown command "fetch"`},
		{"check -h", []string{"check", "-h"}, exitOK, "", "Usage:\n\n\tpolite check ["},
		{"get -h", []string{"get", "-h"}, exitOK, "", "Usage:\n\n\tpolite get ["},
		{"crawl -h", []string{"crawl", "-h"}, exitOK, "", "Usage:\n\n\tpolite crawl ["},
		{"crawl -h: no idle timeout", []string{"crawl", "-h"}, exitOK, "", "-idle-timeout duration\n    \tstop when no request has started or ended for this duration; 0 for none"},
		{"demo -h", []string{"demo", "-h"}, exitOK, "", "Usage:\n\n\tpolite demo ["},
		{"bad flag", []string{"get", "-nope"}, exitError, "", "flag provided but not defined: -nope"},
		{"demo arguments", []string{"demo", "extra"}, exitError, "", "unexpected arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCmd(t, tt.args...)
			if code != tt.wantCode {
				t.Errorf("exit status = %d; want %d (stderr %q)", code, tt.wantCode, stderr)
			}
			if !strings.Contains(stdout, tt.wantStdout) {
				t.Errorf("stdout = %q; want it to contain %q", stdout, tt.wantStdout)
			}
			if !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("stderr = %q; want it to contain %q", stderr, tt.wantStderr)
			}
		})
	}
}
