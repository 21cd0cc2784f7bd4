package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/polite-go/polite/internal/robotstest"
)

const checkRobots = `User-agent: *
Crawl-delay: 2
Disallow: /private/
Allow: /private/press/
Disallow: /*.pdf$

User-agent: otherbot
Disallow: /
`

func TestCheck(t *testing.T) {
	site := newTestSite(t, checkRobots, nil)
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "maintenance", http.StatusServiceUnavailable)
	}))
	t.Cleanup(down.Close)
	gone := newTestSite(t, "", nil)
	gone.Close() // connection refused
	noRobots := newTestSite(t, "", nil)
	mapped := newTestSite(t, "Sitemap: https://example.com/a.xml\nUser-agent: *\nDisallow: /x\nSitemap: https://example.com/b.xml\n", nil)

	tests := []checkCase{
		{
			name:     "allowed",
			args:     []string{site.URL + "/", site.URL + "/private/press/kit"},
			wantCode: exitOK,
			wantLines: []string{
				`^allowed\s+` + regexp.QuoteMeta(site.URL+"/") + `\s+group \* \(line 1\)\s+rule none\s+crawl-delay 2s\s+pace 2s$`,
				`^allowed\s+` + regexp.QuoteMeta(site.URL+"/private/press/kit") + `\s+group \* \(line 1\)\s+rule "Allow: /private/press/" \(line 4\)\s+crawl-delay 2s\s+pace 2s$`,
			},
		},
		{
			name:     "one blocked",
			args:     []string{site.URL + "/a", site.URL + "/private/x", site.URL + "/doc.pdf"},
			wantCode: exitBlocked,
			wantLines: []string{
				`^allowed\s+\S+/a\s`,
				`^blocked\s+\S+/private/x\s+group \* \(line 1\)\s+rule "Disallow: /private/" \(line 3\)\s`,
				`^blocked\s+\S+/doc.pdf\s+group \* \(line 1\)\s+rule "Disallow: /\*\.pdf\$" \(line 5\)\s`,
			},
		},
		{
			name:      "user agent chooses the group",
			args:      []string{"-ua", "OtherBot/2.0", site.URL + "/a"},
			wantCode:  exitBlocked,
			wantLines: []string{`^blocked\s+\S+/a\s+group otherbot \(line 7\)\s+rule "Disallow: /" \(line 8\)\s+crawl-delay none\s+pace 1s$`},
		},
		{
			name:      "delay sets the pace",
			args:      []string{"-delay", "3s", site.URL + "/a"},
			wantCode:  exitOK,
			wantLines: []string{`^allowed\s+\S+/a\s+group \* \(line 1\)\s+rule none\s+crawl-delay 2s\s+pace 3s$`},
		},
		{
			name:      "robots.txt 404: no rules",
			args:      []string{noRobots.URL + "/private/x"},
			wantCode:  exitOK,
			wantLines: []string{`^allowed\s+\S+/private/x\s+group none\s+rule none\s+crawl-delay none\s+pace 1s\s+\(robots.txt unavailable \(status 404\): no rules apply\)$`},
		},
		{
			name:      "robots.txt 503",
			args:      []string{down.URL + "/a"},
			wantCode:  exitError,
			wantLines: []string{`^allowed\s+\S+/a\s.*robots.txt unreachable.*FailOpen`},
			wantErr:   "answered 503 Service Unavailable",
		},
		{
			name:      "network error",
			args:      []string{gone.URL + "/a"},
			wantCode:  exitError,
			wantLines: []string{`^allowed\s+\S+/a\s.*robots.txt unreachable`},
			wantErr:   "connection refused",
		},
		{
			name:     "sitemaps listed once",
			args:     []string{mapped.URL + "/a", mapped.URL + "/x"},
			wantCode: exitBlocked,
			wantLines: []string{
				`^allowed\s+\S+/a\s`,
				`^blocked\s+\S+/x\s`,
				`^sitemap\s+https://example.com/a.xml$`,
				`^sitemap\s+https://example.com/b.xml$`,
			},
		},
		{
			name:     "no URL",
			args:     nil,
			wantCode: exitError,
			wantErr:  "no URL given",
		},
		{
			name:     "not http",
			args:     []string{"ftp://example.com/x"},
			wantCode: exitError,
			wantErr:  "not an absolute http or https URL",
		},
		{
			name:     "relative URL",
			args:     []string{"/private/x"},
			wantCode: exitError,
			wantErr:  "not an absolute http or https URL",
		},
	}
	runCheckCases(t, tests)
}

// TestCheckLocalRobots tests a local robots.txt. The URLs name a host that
// does not resolve, so any network use would fail the command.
func TestCheckLocalRobots(t *testing.T) {
	file := filepath.Join(t.TempDir(), "robots.txt")
	if err := os.WriteFile(file, []byte(checkRobots), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []checkCase{
		{
			name:     "paths and URLs",
			args:     []string{"-robots", file, "/", "/private/x", "http://nowhere.invalid/private/press/a"},
			wantCode: exitBlocked,
			wantLines: []string{
				`^allowed\s+/\s+group \* \(line 1\)\s+rule none\s+crawl-delay 2s\s+pace 2s$`,
				`^blocked\s+/private/x\s+group \* \(line 1\)\s+rule "Disallow: /private/" \(line 3\)\s`,
				`^allowed\s+http://nowhere.invalid/private/press/a\s+group \* \(line 1\)\s+rule "Allow: /private/press/" \(line 4\)\s`,
			},
		},
		{
			// bitbucket.org's file: a Crawl-delay among the user-agent
			// lines, over the policy's MaxCrawlDelay; the group is named
			// again further down, and both parts bind.
			name: "lines that decided and a capped Crawl-delay",
			args: []string{"-robots", writeFile(t, "User-Agent: *\nCrawl-delay: 120\nUser-agent: 008\nDisallow: /x\n\nUser-agent: Googlebot\nAllow: /\n\nUser-agent: *\nAllow: /x/open\n"),
				"/x", "/x/open", "/y"},
			wantCode: exitBlocked,
			wantLines: []string{
				`^blocked\s+/x\s+group \* \(lines 1, 9\)\s+rule "Disallow: /x" \(line 4\)\s+crawl-delay 2m0s \(capped at 1m0s\)\s+pace 1m0s$`,
				`^allowed\s+/x/open\s+group \* \(lines 1, 9\)\s+rule "Allow: /x/open" \(line 10\)\s+crawl-delay 2m0s \(capped at 1m0s\)\s+pace 1m0s$`,
				`^allowed\s+/y\s+group \* \(lines 1, 9\)\s+rule none\s+crawl-delay 2m0s \(capped at 1m0s\)\s+pace 1m0s$`,
			},
			wantErr: `robots.txt:3: skipped, no product token: "User-agent: 008"`,
		},
		{
			name:      "all allowed",
			args:      []string{"-robots", file, "/a", "/b.pdf?x=1"},
			wantCode:  exitOK,
			wantLines: []string{`^allowed\s+/a\s`, `^allowed\s+/b.pdf\?x=1\s`},
		},
		{
			name:      "robots.txt itself",
			args:      []string{"-robots", file, "/robots.txt"},
			wantCode:  exitOK,
			wantLines: []string{`^allowed\s+/robots.txt\s+group none\s+rule none\s+crawl-delay none\s+pace 1s\s+\(/robots.txt is always allowed\)$`},
		},
		{
			name:     "missing file",
			args:     []string{"-robots", filepath.Join(t.TempDir(), "nope.txt"), "/a"},
			wantCode: exitError,
			wantErr:  "no such file",
		},
		{
			name:      "skipped lines",
			args:      []string{"-robots", writeFile(t, "User-agent: *\nDisalow: /x\nCrawl-delay: soon\n"), "/x"},
			wantCode:  exitOK,
			wantLines: []string{`^allowed\s+/x\s`},
			wantErr:   `robots.txt:2: skipped, unknown field: "Disalow: /x"`,
		},
		{
			name:      "no readable line",
			args:      []string{"-robots", writeFile(t, "# Robots\n\nAllow everyone.\nThanks!\n"), "/x"},
			wantCode:  exitError,
			wantLines: []string{`^allowed\s+/x\s`},
			wantErr:   "no line of it is robots.txt: a crawler reads no rule in it, and every URL is allowed\n",
			errFirst:  "robots.txt: no line of it is robots.txt",
		},
		{
			name:      "binary data",
			args:      []string{"-robots", writeFile(t, "\x7fELF\x02\x01\x01\x00\x00binary junk\n"+strings.Repeat("\xff\xfe junk: \x01\x02\n", 100)), "/x"},
			wantCode:  exitError,
			wantLines: []string{`^allowed\s+/x\s`},
			wantErr:   "robots.txt: 101 lines skipped, not listed\n",
			errFirst:  "robots.txt: binary data, not robots.txt: a crawler reads no rule in it, and every URL is allowed",
			notErr:    "skipped, unknown field",
		},
		{
			name:      "binary data after the first 512 bytes",
			args:      []string{"-robots", writeFile(t, "# "+strings.Repeat("x", 600)+"\n"+strings.Repeat("\xff\xfe\xfd\x80\n", 400)), "/x"},
			wantCode:  exitError,
			wantLines: []string{`^allowed\s+/x\s`},
			errFirst:  "robots.txt: binary data, not robots.txt",
			notErr:    "skipped, no colon",
		},
		{
			name:      "an image",
			args:      []string{"-robots", writeFile(t, "\x89PNG\x0d\x0a\x1a\x0a"+strings.Repeat("\x00", 20)), "/x"},
			wantCode:  exitError,
			wantLines: []string{`^allowed\s+/x\s`},
			errFirst:  "robots.txt: binary data (image/png), not robots.txt",
		},
		{
			name:      "an HTML page",
			args:      []string{"-robots", writeFile(t, "<!DOCTYPE html>\n<html><head><title>Not found</title></head>\n<body>User-agent: nobody</body></html>\n"), "/x"},
			wantCode:  exitError,
			wantLines: []string{`^allowed\s+/x\s`},
			errFirst:  "robots.txt: an HTML page, not robots.txt: a crawler reads no rule in it",
			notErr:    ":1: skipped",
		},
		{
			name:      "UTF-16",
			args:      []string{"-robots", writeFile(t, "\xff\xfeU\x00s\x00e\x00r\x00"), "/x"},
			wantCode:  exitError,
			wantLines: []string{`^allowed\s+/x\s`},
			errFirst:  "robots.txt: text in UTF-16LE, not robots.txt",
		},
		{
			name:      "Latin-1 comments are text",
			args:      []string{"-robots", writeFile(t, "# Caf\xe9 du Th\xe9\xe2tre\nUser-agent: *\nDisallow: /x\n"), "/x"},
			wantCode:  exitBlocked,
			wantLines: []string{`^blocked\s+/x\s`},
			notErr:    "polite check",
		},
		{
			name:     "sitemaps",
			args:     []string{"-robots", writeFile(t, "User-agent: *\nDisallow: /x\nSitemap: not-a-url\nSitemap: https://example.com/sitemap.xml\n"), "/x", "http://nowhere.invalid/y"},
			wantCode: exitBlocked,
			wantLines: []string{
				`^blocked\s+/x\s`,
				`^allowed\s+http://nowhere.invalid/y\s`,
				`^sitemap\s+https://example.com/sitemap.xml$`,
			},
			wantErr: `robots.txt:3: skipped, Sitemap not an absolute http(s) URL: "Sitemap: not-a-url"`,
		},
	}
	runCheckCases(t, tests)
}

// writeFile writes body to a robots.txt in a new temporary directory and
// returns its path.
func writeFile(t *testing.T, body string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "robots.txt")
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// checkLines checks that out has one line per pattern, each matching it.
func checkLines(t *testing.T, out string, patterns []string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if out == "" {
		lines = nil
	}
	if len(lines) != len(patterns) {
		t.Errorf("got %d lines; want %d:\n%s", len(lines), len(patterns), out)
		return
	}
	for i, p := range patterns {
		if !regexp.MustCompile(p).MatchString(lines[i]) {
			t.Errorf("line %d = %q; want it to match %s", i+1, lines[i], p)
		}
	}
}

// checkCase is one run of polite check and what it must give.
type checkCase struct {
	name      string
	args      []string
	wantCode  int
	wantLines []string // regular expressions, one per stdout line, in order
	wantErr   string   // in stderr
	errFirst  string   // in stderr's first line, when set
	notErr    string   // not in stderr, when set
}

func runCheckCases(t *testing.T, tests []checkCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCmd(t, append([]string{"check"}, tt.args...)...)
			if code != tt.wantCode {
				t.Errorf("exit status = %d; want %d\nstdout:\n%s\nstderr:\n%s", code, tt.wantCode, stdout, stderr)
			}
			checkLines(t, stdout, tt.wantLines)
			if !strings.Contains(stderr, tt.wantErr) {
				t.Errorf("stderr = %q; want it to contain %q", stderr, tt.wantErr)
			}
			if first, _, _ := strings.Cut(stderr, "\n"); !strings.Contains(first, tt.errFirst) {
				t.Errorf("stderr's first line = %q; want it to contain %q", first, tt.errFirst)
			}
			if tt.notErr != "" && strings.Contains(stderr, tt.notErr) {
				t.Errorf("stderr = %q; want it not to contain %q", stderr, tt.notErr)
			}
		})
	}
}

// usageRobots is the robots.txt of draft-ietf-aipref-attach-05 §3.4, with
// a Content-Signal line as Cloudflare writes it.
var usageRobots = strings.Replace(robotstest.AttachExample, "/ai-ok/ train-ai=y\n", "/ai-ok/ train-ai=y\nContent-Signal: search=yes\n", 1)

// TestCheckUsage checks the usage preferences check shows for each URL,
// -use, and the usage lines of each group.
func TestCheckUsage(t *testing.T) {
	file := writeFile(t, usageRobots)
	groups := []string{
		`^usage\s+group \*\s+"Content-Usage: train-ai=n"$`,
		`^usage\s+group \*\s+"Content-Usage: /ai-ok/ train-ai=y"$`,
		`^usage\s+group \*\s+"Content-Signal: search=yes"$`,
		`^usage\s+group ExampleBot\s+"Content-Usage: train-ai=y"$`,
	}
	site := newTestSite(t, usageRobots, nil)
	other := newTestSite(t, "User-agent: *\nContent-Usage: search=n\n", nil)
	tests := []checkCase{
		{
			name:     "the drafts' example",
			args:     []string{"-robots", file, "/test", "/never/test", "/ai-ok/test"},
			wantCode: exitBlocked,
			wantLines: append([]string{
				`^allowed\s+/test\s+group \* \(line 1\)\s+rule "Allow: /" \(line 2\)\s+crawl-delay none\s+pace 1s\s+usage train-ai=n, search=y$`,
				`^blocked\s+/never/test\s+group \* \(line 1\)\s+rule "Disallow: /never/" \(line 3\)\s+crawl-delay none\s+pace 1s$`,
				`^allowed\s+/ai-ok/test\s+group \* \(line 1\)\s+rule "Allow: /" \(line 2\)\s+crawl-delay none\s+pace 1s\s+usage train-ai=y, search=y$`,
			}, groups...),
		},
		{
			name:      "a bot with its own group",
			args:      []string{"-robots", file, "-ua", "ExampleBot/1.0", "/test"},
			wantCode:  exitOK,
			wantLines: append([]string{`^allowed\s+/test\s+group examplebot \(line 8\)\s+rule "Allow: /" \(line 9\)\s+crawl-delay none\s+pace 1s\s+usage train-ai=y$`}, groups...),
		},
		{
			name:     "-use blocks what a preference disallows",
			args:     []string{"-robots", file, "-use", "train-ai", "/test", "/ai-ok/test"},
			wantCode: exitBlocked,
			wantLines: append([]string{
				`^blocked\s+/test\s+group \* \(line 1\)\s+rule "Allow: /" \(line 2\)\s+crawl-delay none\s+pace 1s\s+usage train-ai=n, search=y\s+\(-use: train-ai=n, as "Content-Usage: train-ai=n"\)$`,
				`^allowed\s+/ai-ok/test\s`,
			}, groups...),
		},
		{
			name:      "-use of another use",
			args:      []string{"-robots", file, "-use", "search,ai-input", "/test"},
			wantCode:  exitOK,
			wantLines: append([]string{`^allowed\s+/test\s`}, groups...),
		},
		{
			name:     "-use not a label",
			args:     []string{"-use", "Train AI", "/test"},
			wantCode: exitError,
			wantErr:  "not a category of use",
		},
		{
			name:     "two files: each usage line names its own",
			args:     []string{site.URL + "/test", other.URL + "/x"},
			wantCode: exitOK,
			wantLines: []string{
				`^allowed\s+\S+/test\s.*usage train-ai=n, search=y$`,
				`^allowed\s+\S+/x\s.*usage search=n$`,
				`^usage\s+group \*\s+"Content-Usage: train-ai=n"\s+` + regexp.QuoteMeta(site.URL+"/robots.txt") + `$`,
				`^usage\s+group \*\s+"Content-Usage: /ai-ok/ train-ai=y"\s`,
				`^usage\s+group \*\s+"Content-Signal: search=yes"\s`,
				`^usage\s+group ExampleBot\s+"Content-Usage: train-ai=y"\s`,
				`^usage\s+group \*\s+"Content-Usage: search=n"\s+` + regexp.QuoteMeta(other.URL+"/robots.txt") + `$`,
			},
		},
	}
	runCheckCases(t, tests)
}
