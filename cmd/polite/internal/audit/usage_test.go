package audit

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/polite-go/polite/internal/robotstest"
	"github.com/polite-go/polite/robotstxt"
)

// usageRobots is the robots.txt of draft-ietf-aipref-attach-05 §3.4, with
// a Content-Signal line, as check's tests read it.
var usageRobots = strings.Replace(robotstest.AttachExample, "/ai-ok/ train-ai=y\n", "/ai-ok/ train-ai=y\nContent-Signal: search=yes\n", 1)

// aiCheck is a requestCheck for the tests: a request under /ai/ breaks it.
type aiCheck struct{}

func (aiCheck) Name() string { return "usage_pref" }

func (aiCheck) Judge(c *crawler, g *robotstxt.Group, allowed bool, r *logRecord) (bool, string) {
	return g != nil && bytes.HasPrefix(r.target, []byte("/ai/")), "preference n"
}

// TestAuditCheckColumn checks the seam of the checks to come: a check's
// violations are counted, shown in every format, and count among the
// crawler's violations, which -fail-on reads.
func TestAuditCheckColumn(t *testing.T) {
	a := newAuditor([]Robots{versionOf("User-agent: *\nDisallow:\n", math.MinInt64)}, DefaultRetryAfter, false, []requestCheck{aiCheck{}})
	got := auditText(t, a, clfAt("a", 0, "/ai/x", 200, "testbot")+clfAt("a", 10, "/x", 200, "testbot")+clfAt("a", 20, "/ai/y", 200, "testbot"))
	if want := []violationKey{{1, numKinds}, {3, numKinds}}; !slices.Equal(got, want) {
		t.Errorf("violations %v; want %v", got, want)
	}
	rep := a.Report([]string{"log"})
	if got, want := rep.Crawlers(), []Crawler{{"testbot", true, 2}}; !slices.Equal(got, want) {
		t.Errorf("Crawlers = %v; want %v", got, want)
	}

	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"usage_pref", "log:1", "preference n"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the text report lacks %q:\n%s", want, text.String())
		}
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var out jsonReport
	if err := json.Unmarshal(js.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if n := out.Crawlers[0].Violations["usage_pref"]; n != 2 {
		t.Errorf("JSON: usage_pref %d; want 2", n)
	}
	var cs bytes.Buffer
	if err := rep.WriteCSV(&cs); err != nil {
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
	uses := map[string][]robotstxt.Category{"gptbot": {robotstxt.TrainAI}, "examplebot": {robotstxt.TrainAI}, "searchbot": {robotstxt.Search}}
	a := newAuditor([]Robots{versionOf(usageRobots, math.MinInt64)}, DefaultRetryAfter, false, []requestCheck{usageCheck{uses}})
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
}
