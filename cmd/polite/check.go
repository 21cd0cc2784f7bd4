package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/polite-go/polite/robotstxt"
	"time"
)

// robotsTestOrigin stands for the site when -robots is given and a URL is a
// bare path.
const robotsTestOrigin = "http://robots.test"

func runCheck(args []string, stdout, stderr io.Writer) int {
	var c commonFlags
	fs := newFlagSet("check", stderr, &c)
	robotsFile := fs.String("robots", "", "test the local robots.txt `FILE`, with no network at all")
	if status := parseFlags(fs, args); status >= 0 {
		return status
	}
	var base http.RoundTripper // nil: the network
	status := exitOK
	if *robotsFile != "" {
		body, err := os.ReadFile(*robotsFile)
		if err != nil {
			fmt.Fprintf(stderr, "polite check: %v\n", err)
			return exitError
		}
		base = localRobots(body)
		if !reportSkipped(stderr, *robotsFile, robotstxt.Parse(body)) {
			status = exitError
		}
	}
	tr, err := newTransport(base, c.options())
	if err != nil {
		return usageError(fs, "%v", err)
	}
	urls, err := urlArgs(fs)
	if err != nil {
		return usageError(fs, "%v", err)
	}
	type target struct {
		shown string // as the user wrote it
		req   *http.Request
	}
	targets := make([]target, 0, len(urls))
	for _, arg := range urls {
		u, err := parseURL(arg, *robotsFile != "")
		if err != nil {
			if *robotsFile == "" && strings.HasPrefix(arg, "/") {
				return usageError(fs, "%v; a bare path needs -robots FILE", err)
			}
			return usageError(fs, "%v", err)
		}
		req, err := http.NewRequest(http.MethodGet, u.String(), nil)
		if err != nil {
			return usageError(fs, "%v", err)
		}
		targets = append(targets, target{arg, req})
	}

	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	for _, t := range targets {
		d, err := tr.Check(t.req)
		if err != nil {
			tw.Flush()
			fmt.Fprintf(stderr, "polite check: %s: %v\n", t.shown, err)
			status = worse(status, exitError)
			continue
		}
		verdict := "allowed"
		if !d.Allowed {
			verdict = "blocked"
			status = worse(status, exitBlocked)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s%s\n", verdict, t.shown,
			"group "+orNone(d.Group), "rule "+orNone(quoteRule(d.Rule)),
			"crawl-delay "+durationOrNone(d.CrawlDelay), "pace "+short(d.Pace), reason(d.Reason))
		if d.Robots.Err != nil {
			tw.Flush()
			fmt.Fprintf(stderr, "polite check: %s: %v\n", d.Robots.URL, d.Robots.Err)
			status = worse(status, exitError)
		}
	}
	tw.Flush()
	return status
}

// reportSkipped writes to w the lines of the robots.txt at path that a
// reader skips, and a warning when it has no line a reader understands, as
// an HTML page or binary data has; it reports false then.
func reportSkipped(w io.Writer, path string, r *robotstxt.File) bool {
	for _, l := range r.Skipped() {
		fmt.Fprintf(w, "polite check: %s:%d: skipped, %s: %q\n", path, l.Line, l.Reason, l.Text)
	}
	if more := r.NumSkipped() - len(r.Skipped()); more > 0 {
		fmt.Fprintf(w, "polite check: %s: and %d more lines skipped\n", path, more)
	}
	if r.NumGroups() == 0 && len(r.Sitemaps()) == 0 && r.NumSkipped() > 0 {
		fmt.Fprintf(w, "polite check: %s: no line of it is robots.txt: a crawler reads no rule in it, and every URL is allowed\n", path)
		return false
	}
	return true
}

// localRobots is a base transport that answers every robots.txt request
// with body and refuses everything else: Check never sends anything else.
type localRobots []byte

func (b localRobots) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.EscapedPath() != "/robots.txt" {
		return nil, errors.New("polite check -robots: no network")
	}
	return &http.Response{
		StatusCode:    http.StatusOK,
		Status:        "200 OK",
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": {"text/plain"}},
		Body:          io.NopCloser(bytes.NewReader(b)),
		ContentLength: int64(len(b)),
		Request:       req,
	}, nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func quoteRule(rule string) string {
	if rule == "" {
		return ""
	}
	return strconv.Quote(rule)
}

func durationOrNone(d time.Duration) string {
	if d == 0 {
		return "none"
	}
	return short(d)
}

func reason(r string) string {
	if r == "" {
		return ""
	}
	return "\t(" + r + ")"
}
