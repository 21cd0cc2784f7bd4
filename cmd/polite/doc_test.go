package main

import (
	"go/parser"
	"go/token"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// packageDoc returns the text of doc.go's package comment.
func packageDoc(t *testing.T) string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.PackageClauseOnly|parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	if f.Doc == nil {
		t.Fatal("doc.go has no package comment")
	}
	return f.Doc.Text()
}

// paragraph returns the text of doc after the line start up to the next
// blank line, and whether start was found.
func paragraph(doc, start string) (string, bool) {
	_, after, ok := strings.Cut(doc, "\n"+start+"\n\n")
	if !ok {
		return "", false
	}
	para, _, _ := strings.Cut(after, "\n\n")
	return para + "\n", true
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestUsageMatchesDoc holds the usage texts to the manual in doc.go: the
// first sentence, the synopsis, the first paragraph on exit status, and each
// command's summary, which opens its section.
func TestUsageMatchesDoc(t *testing.T) {
	doc := packageDoc(t)
	if first, _, _ := strings.Cut(doc, "\n"); !strings.HasPrefix(usage, first+"\n") {
		t.Errorf("usage starts %q; want doc.go's first line, %q", usage[:strings.Index(usage, "\n")], first)
	}
	if got, ok := paragraph(doc, "Usage:"); !ok || got != synopsis("\t") {
		t.Errorf("doc.go's synopsis:\n%s\nwant the usage's:\n%s", got, synopsis("\t"))
	}
	if !strings.Contains(usage, synopsis("\t")) {
		t.Errorf("usage lacks the synopsis:\n%s", usage)
	}
	if got, ok := paragraph(doc, "# Exit status"); !ok || oneLine(got) != oneLine(exitStatus) {
		t.Errorf("doc.go's exit status:\n%s\nwant the usage's:\n%s", got, exitStatus)
	}
	for _, c := range commands {
		heading := "# " + strings.ToUpper(c.name[:1]) + c.name[1:]
		if got, ok := paragraph(doc, heading); !ok || !strings.HasPrefix(oneLine(got), c.summary+" ") {
			t.Errorf("doc.go's section %q starts %q; want the summary %q", heading, got, c.summary)
		}
	}
}

// TestSynopsisFlags holds each command's synopsis to the flags it defines.
func TestSynopsisFlags(t *testing.T) {
	defined := regexp.MustCompile(`(?m)^  (-[a-z-]+)`)
	named := regexp.MustCompile(`\[?(-[a-z-]+)`)
	for _, c := range commands {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := runCmd(t, c.name, "-h")
			if code != exitOK {
				t.Fatalf("%s -h: exit status %d", c.name, code)
			}
			var got, want []string
			for _, m := range defined.FindAllStringSubmatch(stderr, -1) {
				got = append(got, m[1])
			}
			for _, m := range named.FindAllStringSubmatch(strings.Join(c.synopses, " "), -1) {
				want = append(want, m[1])
			}
			slices.Sort(got)
			slices.Sort(want)
			want = slices.Compact(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s defines the flags %v; its synopsis names %v", c.name, got, want)
			}
			if !strings.Contains(stderr, synopsis("\t", c.name)+"\n"+c.summary+"\n") {
				t.Errorf("%s -h:\n%s\nwant its synopsis and summary", c.name, stderr)
			}
		})
	}
}
