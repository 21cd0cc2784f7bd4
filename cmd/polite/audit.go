package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"
)

// auditMemoryLimit is the soft memory limit audit runs under, unless
// GOMEMLIMIT sets one: its bounded tables stay well below it, and the
// garbage collector keeps the rest there.
const auditMemoryLimit = 64 << 20

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
func (f failOnFlag) matches(c *auditRow) bool {
	for _, name := range f {
		if name == c.name || name == "*" && c.judged() {
			return true
		}
	}
	return false
}

func runAudit(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("audit", stderr, nil)
	var robots robotsFlag
	fs.Var(&robots, "robots", "the site's robots.txt `[DATE=]FILE`; repeat with dates, 2006-01-02 or RFC 3339, for a file that changed")
	format := fs.String("format", "text", "the report's `format`: text, json or csv")
	var failOn failOnFlag
	fs.Var(&failOn, "fail-on", "exit with 1 when the crawler `TOKEN` broke a rule; repeat, or * for any crawler")
	timeline := fs.String("timeline", "", "write an SVG timeline of each of the first 20 crawlers to `DIR`")
	retryAfter := fs.Duration("retry-after", defaultRetryAfter, "the pause a 429 or 503 asks for when its line records no Retry-After")
	oneHost := fs.Bool("one-host", false, "take every line for one host's, whatever host it names")
	uses := crawlerUsesValue{}
	fs.Var(uses, "use", "the crawler `TOKEN=USES`, as gptbot=train-ai: its requests for content whose robots.txt usage preference is n for one of USES count as usage_pref; repeat, or *=USES for every crawler")
	fields := fieldsFlag{}
	fs.Var(fields, "fields", "the keys of JSON logs' fields, as `NAME=KEY,...`: time, ua, request, path, status, bytes, host, retry_after, duration")
	if status := parseFlags(fs, args); status >= 0 {
		return status
	}
	switch {
	case *format != "text" && *format != "json" && *format != "csv":
		return usageError(fs, "-format must be text, json or csv")
	case *retryAfter < 0:
		return usageError(fs, "-retry-after must not be negative")
	}
	logs, err := logArgs(fs.Args())
	if err != nil {
		return usageError(fs, "%v", err)
	}
	versions, err := loadRobots(robots)
	if err != nil {
		return usageError(fs, "-robots: %v", err)
	}

	if os.Getenv("GOMEMLIMIT") == "" {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(auditMemoryLimit))
	}
	var checks []requestCheck
	if len(uses) > 0 {
		checks = append(checks, usageCheck{uses})
	}
	a := newAuditor(versions, *retryAfter, *oneHost, checks)
	a.parser.json.root = newJSONTree(fields)
	if *timeline != "" {
		a.timelines = newTimelineBudget()
	}
	status, stopped := auditLogs(ctx, a, logs, stderr)

	rep := newAuditReport(a, logs)
	switch *format {
	case "json":
		err = rep.writeJSON(stdout)
	case "csv":
		err = rep.writeCSV(stdout)
		if n := a.numUnparsed(); n > 0 {
			fmt.Fprintf(stderr, "polite audit: %d lines could not be read; -format text or json lists them\n", n)
		}
	default:
		rep.writeText(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "polite audit: writing the report: %v\n", err)
		status = worse(status, exitError)
	}
	if *timeline != "" {
		if err := rep.writeTimelines(*timeline); err != nil {
			fmt.Fprintf(stderr, "polite audit: %v\n", err)
			status = worse(status, exitError)
		}
	}
	for _, c := range rep.rows {
		if n := c.violations(); n > 0 && failOn.matches(c) {
			fmt.Fprintf(stderr, "polite audit: %s broke robots.txt or the site's pauses %d times\n", c.name, n)
			status = worse(status, exitBlocked)
		}
	}
	if stopped != nil {
		fmt.Fprintf(stderr, "polite audit: interrupted at %s:%d\n", stopped.log, stopped.line)
		status = exitInterrupted
	}
	return status
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

// auditLogs reads every log into a, with a progress line on stderr when
// it is a terminal. A log that cannot be read is reported, once the
// progress line is gone, and the others are read; the status is then
// exitError. When ctx ends, the reading stops, and stopped says where.
func auditLogs(ctx context.Context, a *auditor, logs []string, stderr io.Writer) (status int, stopped *lineLoc) {
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
		r, closeLog, err := openLog(name, &p.read)
		if err == nil {
			err = readLines(ctx, r, func(n int64, text []byte) {
				last.line = n
				a.line(last, text)
				if n&4095 == 0 {
					p.lines.Store(a.lines)
					p.bad.Store(a.numUnparsed())
				}
			})
			closeLog()
		}
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

// writeTimelines writes the timelines of the first crawlers of the report
// to dir, a file each, named after the crawler.
func (rep *auditReport) writeTimelines(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	drawn := 0
	for _, c := range rep.rows {
		if drawn == timelinesDrawn {
			break
		}
		if c.timeline == nil || len(c.timeline.ticks.events) == 0 {
			continue
		}
		drawn++
		f, err := os.Create(filepath.Join(dir, timelineFile(c.name)))
		if err != nil {
			return err
		}
		err = writeAuditTimeline(f, c, rep.a.hosts, time.Duration(rep.a.pause))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}
