package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
)

// aiCheck is a requestCheck for the tests: a request under /ai/ breaks it.
type aiCheck struct{}

func (aiCheck) Name() string { return "usage_pref" }

func (aiCheck) Judge(c *auditRow, v *robotsVersion, r *logRecord) (bool, string) {
	return v != nil && bytes.HasPrefix(r.target, []byte("/ai/")), "preference n"
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
