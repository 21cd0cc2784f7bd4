//go:build unix

package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestInterruptProcess builds the command and sends SIGINT to a real crawl
// of a loopback site once the crawl has printed its first line, never
// after a sleep: the crawl must end with its table, its timeline, the
// interrupted line and 130, not with the 130 of a shell and nothing
// written. (That a second SIGINT exits at once is tested in process, by
// TestInterruptible: after the first, nothing in a crawl blocks long
// enough to send a second one at a known point.)
func TestInterruptProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	bin := filepath.Join(t.TempDir(), "polite")
	if out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	site, _ := hangSite(t, false)
	timeline := filepath.Join(t.TempDir(), "timeline.svg")
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute) // a bound, should the command hang
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "crawl", "-delay", "0", "-concurrency", "1", "-timeline", timeline, site+"/")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The first JSON line: the crawl is under way, and main has set its
	// handler before anything.
	out := bufio.NewReader(stdout)
	if _, err := out.ReadString('\n'); err != nil {
		t.Fatalf("no line on stdout: %v", err)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, out)
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitInterrupted {
		t.Errorf("crawl ended with %v; want exit status %d", err, exitInterrupted)
	}
	want := `(?s)^\nhost\s+requests.*\n\d+ requests, 0 refused by robots.txt, in [^\n]+\npolite crawl: interrupted; URLs still to crawl: \d+\n$`
	if !regexp.MustCompile(want).MatchString(stderr.String()) {
		t.Errorf("stderr:\n%s\nwant it to match %s", stderr.String(), want)
	}
	if b, err := os.ReadFile(timeline); err != nil || !strings.Contains(string(b), "<svg") {
		t.Errorf("timeline: %v, %d bytes; want an SVG", err, len(b))
	}
}
