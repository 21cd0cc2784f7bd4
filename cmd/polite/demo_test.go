package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/polite-go/polite"
)

// TestDemoFast runs `polite demo -fast` and requires its verdict to hold.
func TestDemoFast(t *testing.T) {
	t.Parallel()
	svg := filepath.Join(t.TempDir(), "timeline.svg")
	code, stdout, stderr := runCmd(t, "demo", "-fast", "-timeline", svg)
	if code != exitOK {
		t.Errorf("exit status = %d; want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, claim := range []string{
		"no disallowed URL was requested",
		"no gap was shorter than its pace",
		"every Retry-After was waited out",
		"the pace adapted to slow pages",
		"the robots.txt that answered 503 recovered",
	} {
		if !regexp.MustCompile(`(?m)^  ok    ` + regexp.QuoteMeta(claim) + `$`).MatchString(stdout) {
			t.Errorf("the verdict does not hold %q:\n%s", claim, stdout)
		}
	}
	for _, row := range []string{
		`(?m)^127\.0\.0\.1\s+\d+\s+5\s+200\s+none\s+20ms\s`,
		`(?m)^127\.0\.0\.2\s+\d+\s+2\s+200\s+100ms\s+100ms\s.*\s1\s+1/1 waited$`,
		`(?m)^127\.0\.0\.3\s+\d+\s+2\s+503→200\s+none\s+20ms\s.*\s1\s+1/1 waited$`,
	} {
		if !regexp.MustCompile(row).MatchString(stdout) {
			t.Errorf("the table has no row matching %s:\n%s", row, stdout)
		}
	}
	b, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	counts := svgElements(t, b)
	if counts["line.req"] == 0 || counts["rect.pause"] != 2 || counts["text.refusal"] != 9 {
		t.Errorf("timeline has %d requests, %d pauses, %d refusals; want some, 2 and 9", counts["line.req"], counts["rect.pause"], counts["text.refusal"])
	}
}

// TestDemoRobotsMatchGroundTruth checks each demo site's robots.txt, as the
// library reads it, against the site's hand-written ground truth, which the
// verdict relies on.
func TestDemoRobotsMatchGroundTruth(t *testing.T) {
	uris := map[string][]string{
		"shop": {
			"/", "/catalog/", "/catalog/lamp", "/catalog/?sort=price", "/catalog/?page=2&sort=name", "/?sort=x",
			"/catalog/lamp.pdf", "/catalog/lamp.pdf?download=1", "/manuals/lamp.pdf", "/manuals/old/chair.pdf",
			"/manuals/lamp.pdfx", "/calendar/", "/calendar/?m=1", "/calendar/2026/01/", "/calendar", "/reviews/1", "/about",
		},
		"news":  {"/", "/live", "/2026/01/budget", "/drafts/scoop", "/drafts", "/drafts/"},
		"flaky": {"/", "/about", "/docs/", "/tmp/cache", "/tmp", "/docs/tmp/"},
	}
	for _, s := range demoSites(demoDefault) {
		t.Run(s.name, func(t *testing.T) {
			status, _, body := s.robots(2) // as it is once recovered
			if status != http.StatusOK {
				t.Fatalf("robots.txt answers %d", status)
			}
			tr := polite.New(localRobots(body), polite.WithUserAgent(defaultUA))
			// Every page the site links to, and the cases above.
			seen := make(map[string]bool)
			var all []string
			for path, p := range s.pages {
				for _, uri := range append([]string{path}, p.links...) {
					if !strings.HasPrefix(uri, "{") && !seen[uri] {
						seen[uri] = true
						all = append(all, uri)
					}
				}
			}
			all = append(all, uris[s.name]...)
			for _, uri := range all {
				req, err := http.NewRequest(http.MethodGet, "http://"+s.ip+uri, nil)
				if err != nil {
					t.Fatal(err)
				}
				d, err := tr.Check(req)
				if err != nil {
					t.Fatal(err)
				}
				if d.Allowed == s.disallowed(uri) {
					t.Errorf("%s: the library says allowed=%v (%s); the ground truth says disallowed=%v", uri, d.Allowed, d.Rule, s.disallowed(uri))
				}
			}
		})
	}
}

// TestDemoWebVirtual serves the sites on one listener, as on systems
// without 127.0.0.2, and reaches each through the demo's transport.
func TestDemoWebVirtual(t *testing.T) {
	for _, virtual := range []bool{false, true} {
		web, err := startDemoWeb(demoFast, 0, virtual)
		if err != nil {
			t.Fatal(err)
		}
		defer web.Close()
		client := &http.Client{Transport: web.transport()}
		for _, s := range web.order {
			resp, err := client.Get(web.url(s) + "/")
			if err != nil {
				t.Fatalf("virtual=%v: %v", virtual, err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if want := "<h1>" + s.name + " /</h1>"; !strings.Contains(string(body), want) {
				t.Errorf("virtual=%v: %s answered %q; want %q", virtual, web.url(s), body, want)
			}
		}
		arrivals, _ := web.serverLog()
		if len(arrivals) != 3 {
			t.Errorf("virtual=%v: %d arrivals; want 3", virtual, len(arrivals))
		}
	}
}

func TestCalendarTrap(t *testing.T) {
	tests := []struct {
		path string
		want []string
		ok   bool
	}{
		{"/calendar/2026/01/", []string{"/calendar/2026/02/", "/calendar/2025/12/"}, true},
		{"/calendar/2026/12/", []string{"/calendar/2027/01/", "/calendar/2026/11/"}, true},
		{"/calendar/2026/13/", nil, false},
		{"/calendar/", nil, false},
	}
	for _, tt := range tests {
		p, ok := calendar(tt.path)
		if ok != tt.ok || strings.Join(p.links, " ") != strings.Join(tt.want, " ") {
			t.Errorf("calendar(%q) = %v, %v; want %v, %v", tt.path, p.links, ok, tt.want, tt.ok)
		}
	}
}

// TestServeDemo serves the demo web, fetches a page from it, and stops it.
func TestServeDemo(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- serveDemo(ctx, demoFast, 0, pw, io.Discard)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	var shop string
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) > 1 && f[1] == "shop" {
			shop = f[0]
			break
		}
	}
	if shop == "" {
		t.Fatal("serveDemo printed no URL for shop")
	}
	go io.Copy(io.Discard, pr)
	code, stdout, stderr := runCmd(t, "check", shop+"calendar/", shop+"calendar/2026/01/")
	if code != exitBlocked || !strings.Contains(stdout, `rule "Disallow: /calendar/"`) {
		t.Errorf("check against the served demo: exit status %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	cancel()
	if code := <-done; code != exitOK {
		t.Errorf("serveDemo = %d; want 0", code)
	}
}
