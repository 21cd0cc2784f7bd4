package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/polite-go/polite"
)

// defaultUA is the User-Agent of every command. Its product token, "polite",
// is what robots.txt groups name to address it.
const defaultUA = "polite/1.0 (+https://github.com/polite-go/polite)"

// commonFlags are the transport settings every network command takes.
type commonFlags struct {
	ua    string
	delay time.Duration
}

// newFlagSet returns a flag set for the command name whose usage line is
// synopsis, with the -ua and -delay flags bound to c.
func newFlagSet(name, synopsis string, stderr io.Writer, c *commonFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("polite "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: polite %s %s\n\nFlags:\n", name, synopsis)
		fs.PrintDefaults()
	}
	fs.StringVar(&c.ua, "ua", defaultUA, "the `User-Agent`; its product token chooses the robots.txt group")
	fs.DurationVar(&c.delay, "delay", polite.DefaultBaseDelay, "least time between two requests to one host")
	return fs
}

// options returns the transport options c stands for.
func (c *commonFlags) options() []polite.Option {
	return []polite.Option{polite.WithUserAgent(c.ua), polite.WithBaseDelay(c.delay)}
}

// parseFlags parses args into fs and checks c. It returns the exit status to
// stop with, or -1 to go on: 0 after -h, 2 after a usage error, which it
// has reported.
func parseFlags(fs *flag.FlagSet, args []string, c *commonFlags) int {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitError // the flag package has printed the error and the usage
	}
	if c != nil && c.delay < 0 {
		return usageError(fs, "-delay must not be negative")
	}
	return -1
}

// usageError reports a usage error of fs's command and returns exitError.
func usageError(fs *flag.FlagSet, format string, args ...any) int {
	fmt.Fprintf(fs.Output(), "%s: %s\n", fs.Name(), fmt.Sprintf(format, args...))
	fs.Usage()
	return exitError
}

// parseURL parses an absolute http or https URL given on the command line.
func parseURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, err
	}
	if scheme := strings.ToLower(u.Scheme); scheme != "http" && scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("%q is not an absolute http or https URL", s)
	}
	return u, nil
}

// parseURLs parses every URL argument of fs, which needs at least one.
func parseURLs(fs *flag.FlagSet) ([]*url.URL, error) {
	if fs.NArg() == 0 {
		return nil, errors.New("no URL given")
	}
	urls := make([]*url.URL, 0, fs.NArg())
	for _, s := range fs.Args() {
		u, err := parseURL(s)
		if err != nil {
			return nil, err
		}
		urls = append(urls, u)
	}
	return urls, nil
}

// hostKey is the pacing key of u, as the transport computes it: the host
// name, lower-cased.
func hostKey(u *url.URL) string {
	return strings.ToLower(u.Hostname())
}

// robotsRule returns what refused a URL: the rule, else the reason.
func robotsRule(e *polite.RobotsBlockedError) string {
	switch {
	case e.Rule != "":
		return e.Rule
	case e.Reason != "":
		return e.Reason
	}
	return "robots.txt"
}

// short formats d for tables and log lines: tens of microseconds below 1ms,
// milliseconds below 10s, tenths of a second above, and "0" for zero.
func short(d time.Duration) string {
	switch {
	case d == 0:
		return "0"
	case d < time.Millisecond && d > -time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	case d < 10*time.Second && d > -10*time.Second:
		return d.Round(time.Millisecond).String()
	}
	return d.Round(100 * time.Millisecond).String()
}
