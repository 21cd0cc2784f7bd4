package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
)

func TestGet(t *testing.T) {
	site := newTestSite(t, "User-agent: *\nDisallow: /private/\n", map[string]http.HandlerFunc{
		"/a":      text("alpha\n"),
		"/b":      text("beta\n"),
		"/old":    http.RedirectHandler("/a", http.StatusMovedPermanently).ServeHTTP,
		"/trap":   http.RedirectHandler("/private/x", http.StatusFound).ServeHTTP,
		"/teapot": func(w http.ResponseWriter, r *http.Request) { http.Error(w, "short and stout", http.StatusTeapot) },
		"/hangup": hangUp,
		"/lost":   http.RedirectHandler("/nowhere", http.StatusFound).ServeHTTP,
	})
	out := filepath.Join(t.TempDir(), "bodies.txt")
	u := regexp.QuoteMeta(site.URL)

	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantFile   string // body written to out, when -o is given
		wantLines  []string
		wantHits   map[string]int // requests the site must have seen
	}{
		{
			name:       "bodies in order",
			args:       []string{site.URL + "/a", site.URL + "/b"},
			wantCode:   exitOK,
			wantStdout: "alpha\nbeta\n",
			wantLines: []string{
				`^200\s+` + u + `/a  waited \S+, answered in \S+, 6 bytes$`,
				`^200\s+` + u + `/b  waited \S+, answered in \S+, 5 bytes$`,
			},
			wantHits: map[string]int{"/robots.txt": 1, "/a": 1, "/b": 1},
		},
		{
			name:       "blocked",
			args:       []string{site.URL + "/private/x", site.URL + "/a"},
			wantCode:   exitBlocked,
			wantStdout: "alpha\n",
			wantLines: []string{
				`^blocked  ` + u + `/private/x  ` + u + `/robots.txt \(Disallow: /private/\)$`,
				`^200\s+` + u + `/a  `,
			},
			wantHits: map[string]int{"/private/x": 0},
		},
		{
			name:       "redirect followed",
			args:       []string{site.URL + "/old"},
			wantCode:   exitOK,
			wantStdout: "alpha\n",
			wantLines:  []string{`^200\s+` + u + `/old  waited \S+, answered in \S+, 6 bytes  → ` + u + `/a$`},
			wantHits:   map[string]int{"/old": 1, "/a": 1},
		},
		{
			name:      "redirect into a disallowed path",
			args:      []string{site.URL + "/trap"},
			wantCode:  exitBlocked,
			wantLines: []string{`^blocked  ` + u + `/trap  \S+ \(Disallow: /private/\)$`},
			wantHits:  map[string]int{"/trap": 1, "/private/x": 0},
		},
		{
			name:       "HTTP error status is not a failure",
			args:       []string{site.URL + "/teapot"},
			wantCode:   exitOK,
			wantStdout: "short and stout\n",
			wantLines:  []string{`^418\s+` + u + `/teapot  `},
		},
		{
			name:      "-f: an HTTP error writes no body",
			args:      []string{"-f", site.URL + "/teapot"},
			wantCode:  exitHTTP,
			wantLines: []string{`^418\s+` + u + `/teapot  waited \S+, answered in \S+, HTTP error: body not written$`},
			wantHits:  map[string]int{"/teapot": 1},
		},
		{
			name:       "-f: success",
			args:       []string{"-f", site.URL + "/a"},
			wantCode:   exitOK,
			wantStdout: "alpha\n",
			wantLines:  []string{`^200\s+` + u + `/a  waited \S+, answered in \S+, 6 bytes$`},
		},
		{
			name:      "-f: after a redirect",
			args:      []string{"-f", site.URL + "/lost"},
			wantCode:  exitHTTP,
			wantLines: []string{`^404\s+` + u + `/lost  waited \S+, answered in \S+, HTTP error: body not written  → ` + u + `/nowhere$`},
		},
		{
			name:       "-f: an HTTP error outranks a refusal",
			args:       []string{"-f", site.URL + "/private/x", site.URL + "/teapot", site.URL + "/a"},
			wantCode:   exitHTTP,
			wantStdout: "alpha\n",
			wantLines:  []string{`^blocked  `, `^418\s+`, `^200\s+`},
		},
		{
			name:      "-f: a network error outranks an HTTP error",
			args:      []string{"-f", site.URL + "/hangup", site.URL + "/teapot"},
			wantCode:  exitError,
			wantLines: []string{`^error    `, `^418\s+`},
		},
		{
			name:      "-f: to a file",
			args:      []string{"-f", "-o", out, site.URL + "/teapot", site.URL + "/b"},
			wantCode:  exitHTTP,
			wantFile:  "beta\n",
			wantLines: []string{`^418\s+\S+/teapot  .*body not written$`, `^200\s+\S+/b  `},
		},
		{
			name:      "network error",
			args:      []string{site.URL + "/hangup"},
			wantCode:  exitError,
			wantLines: []string{`^error    ` + u + `/hangup  .*EOF`},
		},
		{
			name:      "output file",
			args:      []string{"-o", out, site.URL + "/b", site.URL + "/a"},
			wantCode:  exitOK,
			wantFile:  "beta\nalpha\n",
			wantLines: []string{`^200\s+\S+/b  `, `^200\s+\S+/a  `},
		},
		{
			name:      "no URL",
			wantCode:  exitError,
			wantLines: []string{`^polite get: no URL given$`, `^Usage:$`, `^$`, `^\tpolite get \[`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"get", "-delay", "0"}, tt.args...)
			code, stdout, stderr := runCmd(t, args...)
			if code != tt.wantCode {
				t.Errorf("exit status = %d; want %d\nstderr:\n%s", code, tt.wantCode, stderr)
			}
			if stdout != tt.wantStdout {
				t.Errorf("stdout = %q; want %q", stdout, tt.wantStdout)
			}
			if tt.wantFile != "" {
				b, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				if string(b) != tt.wantFile {
					t.Errorf("file = %q; want %q", b, tt.wantFile)
				}
			}
			lines := strings.Split(stderr, "\n")
			for i, p := range tt.wantLines {
				if i >= len(lines) || !regexp.MustCompile(p).MatchString(lines[i]) {
					t.Errorf("stderr line %d does not match %s; stderr:\n%s", i+1, p, stderr)
				}
			}
			for uri, want := range tt.wantHits {
				if got := site.hit(uri); got < want || want == 0 && got != 0 {
					t.Errorf("the site saw %d requests for %s; want %d", got, uri, want)
				}
			}
		})
	}
}

// hangUp closes the connection without an answer.
func hangUp(w http.ResponseWriter, r *http.Request) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		conn.Close()
	}
}

// TestGetFollowsRobotsRedirectToAnotherHost checks that a robots.txt that
// redirects to another host name (an apex to its www, say) is followed,
// through the command's recording base, which adds nothing that could
// leak: the page it disallows is refused, and never requested.
func TestGetFollowsRobotsRedirectToAnotherHost(t *testing.T) {
	www := newTestSite(t, "User-agent: *\nDisallow: /private/\n", nil)
	wwwURL := strings.Replace(www.URL, "127.0.0.1", "localhost", 1)
	var pages atomic.Int32
	apex := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.Redirect(w, r, wwwURL+r.URL.Path, http.StatusMovedPermanently)
			return
		}
		pages.Add(1)
	}))
	t.Cleanup(apex.Close)
	code, _, stderr := runCmd(t, "get", "-delay", "1ms", apex.URL+"/private/x")
	if code != exitBlocked || pages.Load() != 0 {
		t.Errorf("polite get = exit %d, the page requested %d times; want %d and 0\n%s", code, pages.Load(), exitBlocked, stderr)
	}
}
