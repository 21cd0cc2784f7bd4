package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/polite-go/polite/robotstxt"
)

// aiCheck is a requestCheck for the tests: a request under /ai/ breaks it.
type aiCheck struct{}

func (aiCheck) Name() string { return "usage_pref" }

func (aiCheck) Judge(c *auditRow, g *robotstxt.Group, allowed bool, r *logRecord) (bool, string) {
	return g != nil && bytes.HasPrefix(r.target, []byte("/ai/")), "preference n"
}

// TestAuditCheckColumn checks the seam of the checks to come: a check's
// violations are counted, shown in every format, and count for -fail-on.
func TestAuditCheckColumn(t *testing.T) {
	a := newAuditor([]robotsVersion{versionOf("User-agent: *\nDisallow:\n", math.MinInt64)}, defaultRetryAfter, false, []requestCheck{aiCheck{}})
	got := auditText(t, a, clfAt("a", 0, "/ai/x", 200, "testbot")+clfAt("a", 10, "/x", 200, "testbot")+clfAt("a", 20, "/ai/y", 200, "testbot"))
	if want := []violationKey{{1, numKinds}, {3, numKinds}}; !slices.Equal(got, want) {
		t.Errorf("violations %v; want %v", got, want)
	}
	c := a.byName["testbot"]
	if c.violations() != 2 || !(failOnFlag{"testbot"}).matches(c) {
		t.Errorf("testbot: %d violations; want 2, and -fail-on to see it", c.violations())
	}
	rep := newAuditReport(a, []string{"log"})

	var text bytes.Buffer
	rep.writeText(&text)
	for _, want := range []string{"usage_pref", "log:1", "preference n"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the text report lacks %q:\n%s", want, text.String())
		}
	}
	var js bytes.Buffer
	if err := rep.writeJSON(&js); err != nil {
		t.Fatal(err)
	}
	var out jsonAuditReport
	if err := json.Unmarshal(js.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if n := out.Crawlers[0].Violations["usage_pref"]; n != 2 {
		t.Errorf("JSON: usage_pref %d; want 2", n)
	}
	var cs bytes.Buffer
	if err := rep.writeCSV(&cs); err != nil {
		t.Fatal(err)
	}
	records, err := csv.NewReader(&cs).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.Index(records[0], "usage_pref"); i < 0 || records[1][i] != "2" {
		t.Errorf("CSV: %v; want a usage_pref column of 2", records)
	}
}

// TestAuditUsage checks the usage_pref column: a crawler declaring
// train-ai breaks it on content whose preference is train-ai=n, and not on
// a URL robots.txt disallows, which counts as disallowed; a crawler with
// its own group takes its preference; a crawler that declares nothing is
// not judged.
func TestAuditUsage(t *testing.T) {
	uses := crawlerUsesValue{}
	for _, v := range []string{"gptbot=train-ai", "examplebot=train-ai", "searchbot=search"} {
		if err := uses.Set(v); err != nil {
			t.Fatal(err)
		}
	}
	a := newAuditor([]robotsVersion{versionOf(usageRobots, math.MinInt64)}, defaultRetryAfter, false, []requestCheck{usageCheck{uses}})
	log := clfAt("a", 0, "/test", 200, "GPTBot/1.0") + // 1: train-ai=n
		clfAt("a", 10, "/ai-ok/test", 200, "GPTBot/1.0") + // 2: train-ai=y
		clfAt("a", 20, "/never/test", 200, "GPTBot/1.0") + // 3: disallowed, no preference
		clfAt("a", 30, "/robots.txt", 200, "GPTBot/1.0") + // 4: robots.txt itself
		clfAt("a", 40, "/test", 200, "ExampleBot/1.0") + // 5: its own group, train-ai=y
		clfAt("a", 50, "/test", 200, "SearchBot/1.0") + // 6: search=y
		clfAt("a", 60, "/test", 200, "otherbot/1.0") // 7: declares nothing
	got := auditText(t, a, log)
	if want := []violationKey{{1, numKinds}, {3, kindDisallowed}}; !slices.Equal(got, want) {
		t.Errorf("violations %v; want %v", got, want)
	}
	var details []string
	for _, v := range a.byName["gptbot"].examples {
		details = append(details, v.detail)
	}
	if want := []string{"train-ai=n (Content-Usage: train-ai=n)", "Disallow: /never/"}; !slices.Equal(details, want) {
		t.Errorf("gptbot's examples %q; want %q", details, want)
	}

	// Through the command: the column, and -fail-on.
	dir := t.TempDir()
	robots, logFile := dir+"/robots.txt", dir+"/access.log"
	if err := os.WriteFile(robots, []byte(usageRobots), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(logFile, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCmd(t, "audit", "-robots", robots, "-use", "gptbot=train-ai", "-fail-on", "gptbot", "-format", "csv", logFile)
	records, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if err != nil || code != exitBlocked {
		t.Fatalf("audit: %d, %v\n%s\n%s", code, err, stdout, stderr)
	}
	col := slices.Index(records[0], "usage_pref")
	if col < 0 || records[1][0] != "gptbot" || records[1][col] != "1" {
		t.Errorf("CSV %v; want gptbot's usage_pref 1", records)
	}
	if code, _, stderr := runCmd(t, "audit", "-robots", robots, "-use", "gptbot", logFile); code != exitError || !strings.Contains(stderr, "TOKEN=USES") {
		t.Errorf("audit -use gptbot: %d, %q; want a usage error", code, stderr)
	}
}
