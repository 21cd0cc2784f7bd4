package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/polite-go/polite/cmd/polite/internal/audit/audittest"
)

// genRobotsArgs writes the generated logs' two robots.txt files and
// returns the -robots values that switch from one to the other.
func genRobotsArgs(t *testing.T) []string {
	t.Helper()
	v1, v2 := audittest.WriteRobots(t)
	return []string{"-robots", v1, "-robots", audittest.Switch.Format(time.RFC3339) + "=" + v2}
}

// genFiles writes the generated log, combined, plain and gzipped, and
// returns their paths and the log's text.
func genFiles(t *testing.T) (plain, gz string, text []byte, lines []audittest.Line) {
	t.Helper()
	lines = audittest.Log()
	var buf bytes.Buffer
	audittest.Write(&buf, lines, audittest.Combined)
	dir := t.TempDir()
	return audittest.WriteFile(t, dir, "access.log", buf.Bytes()), audittest.WriteFile(t, dir, "access.log.1", audittest.Gzip(buf.Bytes())), buf.Bytes(), lines
}

// auditJSON is the JSON report, as far as the tests read it.
type auditJSON struct {
	Lines    int64 `json:"lines"`
	Unparsed int64 `json:"unparsed"`
	Crawlers []struct {
		Crawler    string           `json:"crawler"`
		Group      string           `json:"group"`
		Violations map[string]int64 `json:"violations"`
		Examples   []struct{}       `json:"examples"`
	} `json:"crawlers"`
}

// decodeAuditJSON decodes the JSON report into the violations of each
// crawler by kind.
func decodeAuditJSON(t *testing.T, stdout string) (auditJSON, map[string]map[string]int64) {
	t.Helper()
	var rep auditJSON
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("the report is not JSON: %v\n%s", err, stdout)
	}
	counts := make(map[string]map[string]int64)
	for _, c := range rep.Crawlers {
		counts[c.Crawler] = c.Violations
	}
	return rep, counts
}

// TestAuditInputs reads the generated log from a file, gzipped, on
// standard input, gzipped there too, and twice over, and checks the
// violations of each crawler in the JSON report.
func TestAuditInputs(t *testing.T) {
	plain, gz, text, lines := genFiles(t)
	want := audittest.Counts(lines)
	tests := []struct {
		name  string
		stdin []byte
		logs  []string
		times int64 // how many times over the log is read
	}{
		{"file", nil, []string{plain}, 1},
		{"gzipped file", nil, []string{gz}, 1},
		{"standard input", text, nil, 1},
		{"gzipped standard input", audittest.Gzip(text), []string{"-"}, 1},
		{"two logs", nil, []string{gz, plain}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.stdin != nil {
				old := auditStdin
				defer func() { auditStdin = old }()
				auditStdin = bytesFile(t, tt.stdin)
			}
			args := append(append([]string{"audit", "-format", "json"}, genRobotsArgs(t)...), tt.logs...)
			code, stdout, stderr := runCmd(t, args...)
			if code != exitOK {
				t.Fatalf("exit status %d; stderr %s", code, stderr)
			}
			rep, got := decodeAuditJSON(t, stdout)
			for name, kinds := range want {
				if name == audittest.Browsers {
					continue
				}
				for kind, n := range kinds {
					// A second reading of the log comes back in time: its
					// gaps and pauses are not those of the first.
					if kind == "disallowed" || tt.times == 1 {
						n *= tt.times
						if got[name][kind] != n {
							t.Errorf("%s: %d %s; want %d", name, got[name][kind], kind, n)
						}
					}
				}
			}
			if wantBad := int64(len(audittest.GarbageLines(lines))) * tt.times; rep.Unparsed != wantBad {
				t.Errorf("%d unparsed lines; want %d", rep.Unparsed, wantBad)
			}
		})
	}
}

// bytesFile returns a file that reads b, as standard input would.
func bytesFile(t *testing.T, b []byte) *os.File {
	t.Helper()
	f, err := os.Open(audittest.WriteFile(t, t.TempDir(), "stdin", b))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestAuditFormats checks the text, JSON and CSV reports of the generated
// log: the crawlers ranked by violations, each with its group.
func TestAuditFormats(t *testing.T) {
	plain, _, _, lines := genFiles(t)
	want := audittest.Counts(lines)
	robots := genRobotsArgs(t)
	run := func(t *testing.T, format string) string {
		args := append(append([]string{"audit", "-format", format}, robots...), plain)
		code, stdout, stderr := runCmd(t, args...)
		if code != exitOK {
			t.Fatalf("exit status %d; stderr %s", code, stderr)
		}
		return stdout
	}
	wantOrder := audittest.Ranking(lines)
	wantGroups := map[string]string{"badbot": "badbot", "fastbot": "*", "pausebot": "*", "curl": "*",
		"googlebot": "*", "goodbot": "goodbot", audittest.Browsers: "-"}

	t.Run("text", func(t *testing.T) {
		out := run(t, "text")
		var order []string
		inTable := false
		for line := range strings.Lines(out) {
			fields := strings.Fields(line)
			switch {
			case len(fields) > 0 && fields[0] == "crawler":
				inTable = true
			case inTable && len(fields) == 0:
				inTable = false
			case inTable:
				order = append(order, fields[0])
				if fields[1] != wantGroups[fields[0]] {
					t.Errorf("%s: group %s; want %s", fields[0], fields[1], wantGroups[fields[0]])
				}
			}
		}
		if !slices.Equal(order, wantOrder) {
			t.Errorf("crawlers ranked %v; want %v", order, wantOrder)
		}
		for _, s := range []string{
			"(Disallow: /)", "(Crawl-delay 2s)", "robots-v2.txt from " + audittest.Switch.Format(time.RFC3339),
			"21 lines could not be read; the first 20:", "access.log:998  neither the Common nor the Combined Log Format, nor JSON", "may be forged", `badbot (group badbot), User-Agent "BadBot/2.0":`,
		} {
			if !strings.Contains(out, s) {
				t.Errorf("the report lacks %q:\n%s", s, out)
			}
		}
	})
	t.Run("json", func(t *testing.T) {
		rep, got := decodeAuditJSON(t, run(t, "json"))
		var order []string
		for _, c := range rep.Crawlers {
			order = append(order, c.Crawler)
			if c.Group != wantGroups[c.Crawler] {
				t.Errorf("%s: group %s; want %s", c.Crawler, c.Group, wantGroups[c.Crawler])
			}
			if c.Crawler != audittest.Browsers && len(c.Examples) != min(int(c.Violations["disallowed"]), 3)+
				min(int(c.Violations["too_soon"]), 3)+min(int(c.Violations["in_pause"]), 3) {
				t.Errorf("%s: %d examples; want up to 3 of each kind", c.Crawler, len(c.Examples))
			}
		}
		if !slices.Equal(order, wantOrder) {
			t.Errorf("crawlers ranked %v; want %v", order, wantOrder)
		}
		for name, kinds := range want {
			if name != audittest.Browsers && !equalMaps(got[name], kinds) {
				t.Errorf("%s: violations %v; want %v", name, got[name], kinds)
			}
		}
	})
	t.Run("csv", func(t *testing.T) {
		records, err := csv.NewReader(strings.NewReader(run(t, "csv"))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		head := records[0]
		col := func(name string) int { return slices.Index(head, name) }
		if len(records) != len(wantOrder)+1 {
			t.Fatalf("%d rows; want a heading and %d", len(records), len(wantOrder))
		}
		for i, r := range records[1:] {
			if r[0] != wantOrder[i] {
				t.Errorf("row %d: %s; want %s", i+1, r[0], wantOrder[i])
			}
			if r[0] == audittest.Browsers {
				continue
			}
			for kind, n := range want[r[0]] {
				if got, _ := strconv.ParseInt(r[col(kind)], 10, 64); got != n {
					t.Errorf("%s: %s %d; want %d", r[0], kind, got, n)
				}
			}
		}
	})
}

// TestAuditFailOn checks the exit statuses of -fail-on, and of errors.
func TestAuditFailOn(t *testing.T) {
	plain, _, _, _ := genFiles(t)
	robots := genRobotsArgs(t)
	html := writeFile(t, "<html><body>not robots.txt</body></html>\n")
	good := writeFile(t, audittest.RobotsV1)
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string
	}{
		{"no -fail-on", nil, exitOK, ""},
		{"a crawler that keeps the rules", []string{"-fail-on", "goodbot"}, exitOK, ""},
		{"one that breaks them", []string{"-fail-on", "GoodBot,BadBot"}, exitBlocked, "badbot broke robots.txt"},
		{"repeated", []string{"-fail-on", "googlebot", "-fail-on", "pausebot"}, exitBlocked, "pausebot broke"},
		{"any crawler", []string{"-fail-on", "*"}, exitBlocked, "fastbot broke"},
		{"a crawler not in the log", []string{"-fail-on", "nobot"}, exitOK, ""},
		{"a missing log", []string{"-fail-on", "goodbot", "/nonexistent/access.log"}, exitError, "no such file"},
		{"a missing log and a violation", []string{"-fail-on", "badbot", "/nonexistent/access.log"}, exitError, "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append(append(append([]string{"audit"}, robots...), tt.args...), plain)
			if n := len(tt.args); n > 0 && strings.HasPrefix(tt.args[n-1], "/nonexistent") {
				args = append(append(append([]string{"audit"}, robots...), tt.args[:n-1]...), tt.args[n-1], plain)
			}
			code, stdout, stderr := runCmd(t, args...)
			if code != tt.wantCode {
				t.Errorf("exit status %d; want %d (stderr %q)", code, tt.wantCode, stderr)
			}
			if !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("stderr %q; want %q", stderr, tt.wantStderr)
			}
			if !strings.Contains(stdout, "badbot") {
				t.Errorf("no report:\n%s", stdout)
			}
		})
	}

	// A malformed command line gets the usage after its error; a value
	// that is wrong, or a file that cannot be read, its error alone.
	usage := []struct {
		name       string
		args       []string
		wantStderr string
		wantUsage  bool
	}{
		{"no -robots", []string{plain}, "no -robots FILE given", true},
		{"bad -format", []string{"-robots", html, "-format", "xml", plain}, "-format must be text, json or csv", false},
		{"HTML for robots.txt", []string{"-robots", html, plain}, "no line of it is robots.txt", false},
		{"two files from the start", []string{"-robots", good, "-robots", good, plain}, "only one file may be in force from the start", false},
		{"the same date twice", []string{"-robots", "2026-01-01=" + good, "-robots", "2026-01-01T00:00:00Z=" + good, plain}, "have the same date", false},
		{"a flag after the logs", append(append([]string{}, robots...), plain, "-format", "json"), "flags must come before the logs: -format", true},
		{"a negative pause", []string{"-robots", html, "-retry-after", "-1s", plain}, "-retry-after must not be negative", false},
		{"an unknown JSON field", []string{"-fields", "agent=ua", plain}, `unknown field "agent"`, false},
		{"an unreadable robots.txt", []string{"-robots", "/nonexistent/robots.txt", plain}, "no such file", false},
		{"an unknown flag", []string{"-robot", good, plain}, "flag provided but not defined: -robot", true},
	}
	for _, tt := range usage {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCmd(t, append([]string{"audit"}, tt.args...)...)
			if code != exitError || !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("exit status %d, stderr %q; want %d and %q", code, stderr, exitError, tt.wantStderr)
			}
			if stdout != "" {
				t.Errorf("stdout %q; want nothing", stdout)
			}
			if got := strings.Contains(stderr, "Usage:\n\n\tpolite audit "); got != tt.wantUsage {
				t.Errorf("stderr %q; want the usage: %v", stderr, tt.wantUsage)
			}
		})
	}
}

// TestAuditTimelines checks that -timeline writes a timeline for each
// crawler that robots.txt binds, and none for browsers.
func TestAuditTimelines(t *testing.T) {
	plain, _, _, lines := genFiles(t)
	dir := filepath.Join(t.TempDir(), "timelines")
	args := append(append([]string{"audit", "-timeline", dir}, genRobotsArgs(t)...), plain)
	if code, _, stderr := runCmd(t, args...); code != exitOK {
		t.Fatalf("exit status %d: %s", code, stderr)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
		doc, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if n := svgElements(t, doc)["line.req"]; n == 0 || n > 2000 {
			t.Errorf("%s: %d requests drawn; want some, at most 2,000", e.Name(), n)
		}
	}
	var want []string
	for _, name := range audittest.Ranking(lines) {
		if name != audittest.Browsers {
			want = append(want, name+".svg")
		}
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("timelines %v; want %v", got, want)
	}
}

// cancelReader reads r, and ends a context once after bytes of it.
type cancelReader struct {
	r      io.Reader
	after  int
	cancel func()
}

func (c *cancelReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if c.after -= n; c.after <= 0 && c.cancel != nil {
		c.cancel()
		c.cancel = nil
	}
	return n, err
}

// TestAuditInterrupt interrupts audit as the first SIGINT does, part way
// through its standard input: it must report the lines it read, say where
// it stopped, and exit with 130.
func TestAuditInterrupt(t *testing.T) {
	_, _, text, _ := genFiles(t)
	const block = 1 << 20 // what the audit reads of a log at a time
	for len(text) < 4*block {
		text = append(text, text...)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	old := auditStdin
	defer func() { auditStdin = old }()
	auditStdin = &cancelReader{r: bytes.NewReader(text), after: block, cancel: cancel}

	var stdout, stderr bytes.Buffer
	code := run(ctx, append(append([]string{"audit", "-format", "json"}, genRobotsArgs(t)...), "-"), &stdout, &stderr)
	if code != exitInterrupted {
		t.Errorf("exit status %d; want %d (stderr %q)", code, exitInterrupted, stderr.String())
	}
	rep, _ := decodeAuditJSON(t, stdout.String())
	total := int64(bytes.Count(text, []byte("\n")))
	if rep.Lines == 0 || rep.Lines >= total {
		t.Errorf("%d lines read; want some of the %d", rep.Lines, total)
	}
	if want := fmt.Sprintf("polite audit: interrupted at -:%d\n", rep.Lines); !strings.HasSuffix(stderr.String(), want) {
		t.Errorf("stderr %q; want it to end with %q", stderr.String(), want)
	}
}

func TestRobotsFlag(t *testing.T) {
	tests := []struct {
		value string
		path  string
		from  string // RFC 3339; "" for the start
		bad   bool
	}{
		{"robots.txt", "robots.txt", "", false},
		{"2026-03-01=robots.txt", "robots.txt", "2026-03-01T00:00:00Z", false},
		{"2026-03-01T12:30:00+02:00=old=robots.txt", "old=robots.txt", "2026-03-01T10:30:00Z", false},
		{"a=b.txt", "a=b.txt", "", false},
		{"2026-03-01=", "", "", true},
		{"", "", "", true},
	}
	for _, tt := range tests {
		var f robotsFlag
		err := f.Set(tt.value)
		if tt.bad {
			if err == nil {
				t.Errorf("Set(%q) = %+v; want an error", tt.value, f)
			}
			continue
		}
		from := ""
		if err == nil && !f[0].From.IsZero() {
			from = f[0].From.UTC().Format(time.RFC3339)
		}
		if err != nil || f[0].Path != tt.path || from != tt.from {
			t.Errorf("Set(%q) = %+v (from %q), %v; want %q from %q", tt.value, f, from, err, tt.path, tt.from)
		}
	}
}

// TestAuditUse checks -use through the command: the usage_pref column, and
// -fail-on, for a crawler that declares train-ai and fetches content whose
// preference is train-ai=n; and a -use that names no use.
func TestAuditUse(t *testing.T) {
	robots := writeFile(t, usageRobots)
	log := audittest.WriteFile(t, t.TempDir(), "access.log", []byte(
		`a 192.0.2.1 - - [01/Mar/2026:10:00:00 +0000] "GET /test HTTP/1.1" 200 10 "-" "GPTBot/1.0"`+"\n"+
			`a 192.0.2.1 - - [01/Mar/2026:10:00:10 +0000] "GET /ai-ok/test HTTP/1.1" 200 10 "-" "GPTBot/1.0"`+"\n"))
	code, stdout, stderr := runCmd(t, "audit", "-robots", robots, "-use", "gptbot=train-ai", "-fail-on", "gptbot", "-format", "csv", log)
	records, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if err != nil || code != exitBlocked {
		t.Fatalf("audit: %d, %v\n%s\n%s", code, err, stdout, stderr)
	}
	col := slices.Index(records[0], "usage_pref")
	if col < 0 || records[1][0] != "gptbot" || records[1][col] != "1" {
		t.Errorf("CSV %v; want gptbot's usage_pref 1", records)
	}
	if code, _, stderr := runCmd(t, "audit", "-robots", robots, "-use", "gptbot", log); code != exitError || !strings.Contains(stderr, "TOKEN=USES") {
		t.Errorf("audit -use gptbot: %d, %q; want a usage error", code, stderr)
	}
}
