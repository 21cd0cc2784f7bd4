package polite

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocCodeIsExampleCode checks that every block of Go code in a
// package documentation of the repository, nested modules included, is
// code that compiles: the lines of an Example or a test of its package,
// written out in the same order. A block that does not parse as Go
// statements or declarations (a formula, a robots.txt, a shell command)
// is not code, and is left alone.
func TestDocCodeIsExampleCode(t *testing.T) {
	dirs := map[string]bool{}
	filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != "." {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			dirs[filepath.Dir(path)] = true
		}
		return nil
	})
	checked := 0
	for dir := range dirs {
		for _, block := range docCodeBlocks(t, dir) {
			checked++
			if !inTests(t, dir, block) {
				t.Errorf("%s: the package documentation's code\n%s\nis not the code of an Example or test of the package", dir, strings.Join(block, "\n"))
			}
		}
	}
	if checked < 5 {
		t.Errorf("checked %d blocks of code in the package documentation; want the repository's, at least 5", checked)
	}
}

// docCodeBlocks returns the blocks of Go code in the package
// documentation of the non-test files of dir, each as trimmed gives it.
func docCodeBlocks(t *testing.T, dir string) [][]string {
	fset := token.NewFileSet()
	names, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	var blocks [][]string
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments|parser.PackageClauseOnly)
		if err != nil {
			t.Fatal(err)
		}
		if f.Doc == nil {
			continue
		}
		var cur []string
		flush := func() {
			if len(cur) > 0 && isGo(strings.Join(cur, "\n")) {
				blocks = append(blocks, trimmed(cur))
			}
			cur = nil
		}
		for _, line := range strings.Split(f.Doc.Text(), "\n") {
			switch {
			case strings.HasPrefix(line, "\t"):
				cur = append(cur, line[1:])
			case line == "" && len(cur) > 0:
				cur = append(cur, "")
			default:
				flush()
			}
		}
		flush()
	}
	return blocks
}

// isGo reports whether src parses as Go statements or as declarations.
func isGo(src string) bool {
	fset := token.NewFileSet()
	if f, err := parser.ParseFile(fset, "", "package p\nfunc _() {\n"+src+"\n}", 0); err == nil && len(f.Decls) == 1 {
		return len(f.Decls[0].(*ast.FuncDecl).Body.List) > 0
	}
	_, err := parser.ParseFile(fset, "", "package p\n"+src, 0)
	return err == nil
}

// inTests reports whether block's lines come, in order and one after
// another, in a test file of dir.
func inTests(t *testing.T, dir string, block []string) bool {
	files, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		lines := trimmed(strings.Split(string(b), "\n"))
		for i := 0; i+len(block) <= len(lines); i++ {
			if equalLines(lines[i:i+len(block)], block) {
				return true
			}
		}
	}
	return false
}

// trimmed returns lines with their runs of space made one, and the empty
// ones dropped: gofmt aligns comments by the block they are in.
func trimmed(lines []string) []string {
	var out []string
	for _, l := range lines {
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func equalLines(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
