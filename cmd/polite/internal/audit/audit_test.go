package audit

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/polite-go/polite/cmd/polite/internal/audit/audittest"
)

// genRobots writes the generated logs' two robots.txt files and returns
// them as the audit reads them: the second in force from audittest.Switch.
func genRobots(t *testing.T) []Robots {
	t.Helper()
	v1, v2 := audittest.WriteRobots(t)
	versions, err := LoadRobots([]RobotsFile{{Path: v1}, {Path: v2, From: audittest.Switch}})
	if err != nil {
		t.Fatal(err)
	}
	return versions
}

// auditWatched reads the log at path as polite audit does, with the
// generated robots.txt files, and returns the auditor and every violation
// it found.
func auditWatched(t *testing.T, path string) (*Auditor, map[audittest.Violation]bool) {
	t.Helper()
	a := New(genRobots(t), Options{RetryAfter: DefaultRetryAfter})
	got := make(map[audittest.Violation]bool)
	a.onViolation = func(v violation) {
		k := audittest.Violation{Line: v.line, Kind: kindKeys[v.kind]}
		if got[k] {
			t.Errorf("line %d: %s found twice", v.line, k.Kind)
		}
		got[k] = true
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	name := filepath.Base(path)
	if err := ReadLog(t.Context(), f, func(n int64, text []byte) { a.Line(name, n, text) }); err != nil {
		t.Fatal(err)
	}
	a.Report([]string{name})
	return a, got
}

// TestAuditFindsEveryViolation reads the generated logs, in each format,
// and checks that the audit finds every violation they hold, on its line,
// and no other; and that it shows every line that is no request by its
// number.
func TestAuditFindsEveryViolation(t *testing.T) {
	tests := []struct {
		name   string
		lines  []audittest.Line
		format audittest.Format
		gzip   bool
	}{
		{"combined with virtual hosts", audittest.Log(), audittest.Combined, false},
		{"JSON lines", audittest.Log(), audittest.JSON, false},
		{"combined, gzipped", audittest.Log(), audittest.Combined, true},
		{"nginx's JSON lines, written as the answers ended", audittest.ByEnd(audittest.Log()), audittest.NginxJSON, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines := tt.lines
			var buf bytes.Buffer
			want := audittest.Write(&buf, lines, tt.format)
			data := buf.Bytes()
			if tt.gzip {
				data = audittest.Gzip(data)
			}
			a, got := auditWatched(t, audittest.WriteFile(t, t.TempDir(), "access.log", data))

			for _, k := range audittest.Sorted(want) {
				if !got[k] {
					t.Errorf("line %d: %s not found", k.Line, k.Kind)
				}
			}
			for _, k := range audittest.Sorted(got) {
				if !want[k] {
					t.Errorf("line %d: %s found, and is none", k.Line, k.Kind)
				}
			}
			kinds := make(map[string]int)
			for k := range want {
				kinds[k.Kind]++
			}
			for _, k := range kindKeys {
				if n := kinds[k]; n < 10 {
					t.Errorf("the generated log has %d violations of kind %s; want more to test", n, k)
				}
			}

			var unparsed []int64
			for _, u := range a.unparsed {
				unparsed = append(unparsed, u.line)
			}
			wantBad := audittest.GarbageLines(lines)
			if !slices.Equal(unparsed, wantBad[:maxUnparsedShown]) || a.Unparsed() != int64(len(wantBad)) {
				t.Errorf("unparsed lines %v, %d in all; want %v, %d in all", unparsed, a.Unparsed(), wantBad[:maxUnparsedShown], len(wantBad))
			}
		})
	}
}
