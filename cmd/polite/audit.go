package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/polite-go/polite/cmd/polite/internal/audit"
	"github.com/polite-go/polite/robotstxt"
)

// auditMemoryLimit is the soft memory limit audit runs under, unless
// GOMEMLIMIT sets one: its bounded tables stay well below it, and the
// garbage collector keeps the rest there.
const auditMemoryLimit = 64 << 20

// auditStdin is what a LOG of "-" reads: standard input, or a test's.
var auditStdin io.Reader = os.Stdin

func runAudit(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("audit", stderr, nil)
	var robots robotsFlag
	fs.Var(&robots, "robots", "the site's robots.txt `[DATE=]FILE`; repeat with dates, 2006-01-02 or RFC 3339, for a file that changed")
	format := fs.String("format", "text", "the report's `format`: text, json or csv")
	var failOn failOnFlag
	fs.Var(&failOn, "fail-on", "exit with 1 when the crawler `TOKEN` broke a rule; repeat, or * for any crawler")
	timeline := fs.String("timeline", "", "write an SVG timeline of each of the first 20 crawlers to `DIR`")
	retryAfter := fs.Duration("retry-after", audit.DefaultRetryAfter, "the pause a 429 or 503 asks for when its line records no Retry-After")
	oneHost := fs.Bool("one-host", false, "take every line for one host's, whatever host it names")
	uses := crawlerUsesValue{}
	fs.Var(uses, "use", "the crawler `TOKEN=USES`, as gptbot=train-ai: its requests for content whose robots.txt usage preference is n for one of USES count as usage_pref; repeat, or *=USES for every crawler")
	fields := audit.Fields{}
	fs.Var(fields, "fields", "the keys of JSON logs' fields, as `NAME=KEY,...`: time, ua, request, path, status, bytes, host, retry_after, duration")
	if status := parseFlags(fs, args); status >= 0 {
		return status
	}
	switch {
	case *format != "text" && *format != "json" && *format != "csv":
		return valueError(fs, "-format must be text, json or csv")
	case *retryAfter < 0:
		return valueError(fs, "-retry-after must not be negative")
	case len(robots) == 0:
		return usageError(fs, "no -robots FILE given")
	}
	logs, err := logArgs(fs.Args())
	if err != nil {
		return usageError(fs, "%v", err)
	}
	versions, err := audit.LoadRobots(robots)
	if err != nil {
		return valueError(fs, "-robots: %v", err)
	}

	if os.Getenv("GOMEMLIMIT") == "" {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(auditMemoryLimit))
	}
	a := audit.New(versions, audit.Options{
		RetryAfter: *retryAfter,
		OneHost:    *oneHost,
		Uses:       map[string][]robotstxt.Category(uses),
		Fields:     fields,
		Timelines:  *timeline != "",
	})
	status, stopped := auditLogs(ctx, a, logs, stderr)

	rep := a.Report(logs)
	switch *format {
	case "json":
		err = rep.WriteJSON(stdout)
	case "csv":
		err = rep.WriteCSV(stdout)
		if n := a.Unparsed(); n > 0 {
			fmt.Fprintf(stderr, "polite audit: %d lines could not be read; -format text or json lists them\n", n)
		}
	default:
		err = rep.WriteText(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "polite audit: writing the report: %v\n", err)
		status = worse(status, exitError)
	}
	if *timeline != "" {
		if err := rep.WriteTimelines(*timeline); err != nil {
			fmt.Fprintf(stderr, "polite audit: %v\n", err)
			status = worse(status, exitError)
		}
	}
	for _, c := range rep.Crawlers() {
		if c.Violations > 0 && failOn.matches(c) {
			fmt.Fprintf(stderr, "polite audit: %s broke robots.txt or the site's pauses %d times\n", c.Name, c.Violations)
			status = worse(status, exitBlocked)
		}
	}
	if stopped != nil {
		fmt.Fprintf(stderr, "polite audit: interrupted at %s:%d\n", stopped.log, stopped.line)
		status = exitInterrupted
	}
	return status
}

// robotsFlag collects -robots values: FILE, or DATE=FILE.
type robotsFlag []audit.RobotsFile

func (f *robotsFlag) String() string { return "" }

// Set reads FILE or DATE=FILE. DATE is 2006-01-02, midnight UTC, or an RFC
// 3339 time; a value whose part before '=' is no date is all a file name.
func (f *robotsFlag) Set(v string) error {
	file := audit.RobotsFile{Path: v}
	if date, path, ok := strings.Cut(v, "="); ok {
		if t, ok := parseRobotsDate(date); ok {
			file = audit.RobotsFile{Path: path, From: t}
		}
	}
	if file.Path == "" {
		return errors.New("no file name")
	}
	*f = append(*f, file)
	return nil
}

func parseRobotsDate(s string) (time.Time, bool) {
	for _, layout := range []string{"2006-01-02", time.RFC3339Nano} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// failOnFlag is -fail-on: crawler names, repeated or separated by commas.
type failOnFlag []string

func (f *failOnFlag) String() string { return strings.Join(*f, ",") }

func (f *failOnFlag) Set(v string) error {
	for name := range strings.SplitSeq(v, ",") {
		if name = strings.ToLower(strings.TrimSpace(name)); name != "" {
			*f = append(*f, name)
		}
	}
	return nil
}

// matches reports whether the flag names crawler c: by its name, or "*"
// for any crawler that robots.txt binds.
func (f failOnFlag) matches(c audit.Crawler) bool {
	for _, name := range f {
		if name == c.Name || name == "*" && c.Judged {
			return true
		}
	}
	return false
}

// logArgs returns the logs to read: the arguments, or standard input when
// there are none and it is not a terminal.
func logArgs(args []string) ([]string, error) {
	var misplaced []string
	for _, a := range args {
		if len(a) > 1 && a[0] == '-' {
			name, _, _ := strings.Cut(a, "=")
			misplaced = append(misplaced, name)
		}
	}
	switch {
	case len(misplaced) > 0:
		return nil, fmt.Errorf("flags must come before the logs: %s", strings.Join(misplaced, " "))
	case len(args) > 0:
		return args, nil
	}
	if f, ok := auditStdin.(*os.File); ok && isTerminal(f) {
		return nil, fmt.Errorf("no LOG given, and standard input is a terminal")
	}
	return []string{"-"}, nil
}

// A lineLoc is where a line is: its log, as named on the command line,
// and its number there, from 1.
type lineLoc struct {
	log  string
	line int64
}

// auditLogs reads every log into a, with a progress line on stderr when
// it is a terminal. A log that cannot be read is reported, once the
// progress line is gone, and the others are read; the status is then
// exitError. When ctx ends, the reading stops, and stopped says where.
func auditLogs(ctx context.Context, a *audit.Auditor, logs []string, stderr io.Writer) (status int, stopped *lineLoc) {
	p := &auditProgress{began: time.Now()}
	for _, name := range logs {
		if size := logSize(name); size >= 0 && p.total >= 0 {
			p.total += size
		} else {
			p.total = -1
		}
	}
	progress := startProgress(stderr, p.line)
	var errs []string
	for _, name := range logs {
		last := lineLoc{name, 0}
		if ctx.Err() != nil {
			stopped = &last
			break
		}
		err := readLog(ctx, name, &p.read, func(n int64, text []byte) {
			last.line = n
			a.Line(name, n, text)
			if n&4095 == 0 {
				p.lines.Store(a.Lines())
				p.bad.Store(a.Unparsed())
			}
		})
		if err != nil && ctx.Err() != nil {
			stopped = &last
			break
		}
		if err != nil {
			errs = append(errs, fmt.Sprintf("polite audit: %s: %v", name, err))
		}
	}
	progress.Stop()
	for _, e := range errs {
		fmt.Fprintln(stderr, e)
	}
	if len(errs) > 0 {
		return exitError, stopped
	}
	return exitOK, stopped
}

// readLog reads the log name, "-" for standard input, a line at a time,
// as audit.ReadLog does. read counts the bytes read from the file,
// compressed or not, for the progress line.
func readLog(ctx context.Context, name string, read *atomic.Int64, line func(n int64, text []byte)) error {
	src := auditStdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		src = f
	}
	return audit.ReadLog(ctx, countingReader{src, read}, line)
}

// logSize returns the size of the log name, or -1 when it is not a
// regular file, as standard input may not be.
func logSize(name string) int64 {
	if name == "-" {
		f, ok := auditStdin.(*os.File)
		if !ok {
			return -1
		}
		name = f.Name()
	}
	fi, err := os.Stat(name)
	if err != nil || !fi.Mode().IsRegular() {
		return -1
	}
	return fi.Size()
}

type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}
