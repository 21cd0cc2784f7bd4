package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/pace"
)

// defaultUA is the User-Agent of every command. Its product token, "polite",
// is what robots.txt groups name to address it.
const defaultUA = "polite/1.0 (+https://github.com/polite-go/polite)"

// defaultPacing is the library's pacing policy, whose defaults the flags
// and the verdicts use.
var defaultPacing = pace.Policy{}.Effective()

// commonFlags are the transport settings every network command takes.
type commonFlags struct {
	ua    string
	delay time.Duration
}

// newFlagSet returns the flag set of the command name, whose usage gives
// its synopsis and summary. With c, it has the -ua and -delay flags,
// bound to c.
func newFlagSet(name string, stderr io.Writer, c *commonFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("polite "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		summary := ""
		for _, cmd := range commands {
			if cmd.name == name {
				summary = cmd.summary
			}
		}
		fmt.Fprintf(stderr, "Usage:\n\n%s\n%s\n\nFlags:\n", synopsis("\t", name), summary)
		fs.PrintDefaults()
		fmt.Fprintf(stderr, "\nThe manual, exit statuses included: %s\n", manual)
	}
	if c != nil {
		fs.StringVar(&c.ua, "ua", defaultUA, "the `User-Agent`; its product token chooses the robots.txt group")
		c.delay = defaultPacing.BaseDelay
		fs.Var((*durationValue)(&c.delay), "delay", "least `duration` between two requests to one host; 0 for none")
	}
	return fs
}

// durationValue is a flag's time.Duration, which, unlike the flag
// package's, says what a value lacks: a unit, most often.
type durationValue time.Duration

func (d *durationValue) String() string { return (*time.Duration)(d).String() }

func (d *durationValue) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		if _, numErr := strconv.ParseFloat(s, 64); numErr == nil {
			return fmt.Errorf("a duration needs a unit, such as %ss or 500ms", s)
		}
		return errors.New("not a duration, such as 5s or 500ms")
	}
	*d = durationValue(v)
	return nil
}

// A flagOption is a transport option that a flag sets.
type flagOption struct {
	flag   string // "-delay"
	name   string // the option, as a *polite.ConfigError names it: "WithPacing"
	field  string // the field of the option's argument, likewise: "BaseDelay"; "" for none
	option polite.Option
}

// options returns the transport options c stands for.
func (c *commonFlags) options() []flagOption {
	return []flagOption{
		{"-ua", "WithUserAgent", "", polite.WithUserAgent(c.ua)},
		{"-delay", "WithPacing", "BaseDelay", polite.WithPacing(pace.Policy{BaseDelay: noneIfZero(c.delay)})},
	}
}

// noneIfZero returns d as a pace.Policy field: -delay 0 means no delay,
// which the policy writes pace.None, since 0 there means the default.
func noneIfZero(d time.Duration) time.Duration {
	if d == 0 {
		return pace.None
	}
	return d
}

// newTransport returns a PoliteTransport over base with opts. The library
// is what validates the options: an invalid one is returned as an error
// that names the flag that set it, for a usage error. The command's bases
// add nothing to a request, so robots.txt fetches go through base too,
// named as the robots.txt transport, which lets a robots.txt redirect to
// another host be followed (apex to www, say).
func newTransport(base http.RoundTripper, opts []flagOption) (*polite.PoliteTransport, error) {
	options := []polite.Option{polite.WithRobotsTransport(base)}
	for _, o := range opts {
		options = append(options, o.option)
	}
	if err := polite.Validate(options...); err != nil {
		var ce *polite.ConfigError
		if errors.As(err, &ce) {
			for _, o := range opts {
				if o.name == ce.Option && o.field == ce.Field {
					return nil, fmt.Errorf("invalid %s: %w", o.flag, err)
				}
			}
		}
		return nil, err
	}
	return polite.New(base, options...), nil
}

// parseFlags parses args into fs. It returns the exit status to stop with,
// or -1 to go on: 0 after -h, which prints the command's usage; 2 after an
// error, which the flag package has reported, followed by the usage when
// the command line is malformed (an unknown flag, a flag without its
// value) and alone when a flag's value is wrong, as valueError has it.
func parseFlags(fs *flag.FlagSet, args []string) int {
	usage := fs.Usage
	fs.Usage = func() {} // printed below, when the error calls for it
	err := fs.Parse(args)
	fs.Usage = usage
	switch {
	case err == nil:
		return -1
	case errors.Is(err, flag.ErrHelp):
		usage()
		return exitOK
	case !isValueError(err):
		usage()
	}
	return exitError
}

// isValueError reports whether err, an error of flag.FlagSet.Parse, is a
// flag's value that its Set refused, which the flag package writes
// "invalid value ..." or, for a boolean, "invalid boolean value ...".
func isValueError(err error) bool {
	msg := err.Error()
	return strings.HasPrefix(msg, "invalid value ") || strings.HasPrefix(msg, "invalid boolean value ")
}

// usageError reports a malformed command line of fs's command, such as
// flags after the arguments or a missing argument, and returns exitError:
// the error, then the command's usage.
func usageError(fs *flag.FlagSet, format string, args ...any) int {
	valueError(fs, format, args...)
	fs.Usage()
	return exitError
}

// valueError reports a value that fs's command cannot use, a flag's or an
// argument's, or a file that it cannot read, and returns exitError: the
// error alone, which the usage would bury.
func valueError(fs *flag.FlagSet, format string, args ...any) int {
	fmt.Fprintf(fs.Output(), "%s: %s\n", fs.Name(), fmt.Sprintf(format, args...))
	return exitError
}

// urlArgs returns the arguments of fs, the URLs: at least one, and no flag
// among them. The flag package stops at the first argument that is not a
// flag, so a flag written after a URL would otherwise be taken for a URL.
func urlArgs(fs *flag.FlagSet) ([]string, error) {
	if fs.NArg() == 0 {
		return nil, errors.New("no URL given")
	}
	var misplaced []string
	for _, a := range fs.Args() {
		if len(a) > 1 && a[0] == '-' { // no URL starts with "-"
			name, _, _ := strings.Cut(a, "=")
			misplaced = append(misplaced, name)
		}
	}
	if len(misplaced) > 0 {
		return nil, fmt.Errorf("flags must come before the URLs: %s", strings.Join(misplaced, " "))
	}
	return fs.Args(), nil
}

// parseURL parses a URL argument: an absolute http or https URL, or, when
// paths is set (check -robots), a bare path such as /private/x, which
// stands for that path on robotsTestOrigin. Its error says what was likely
// meant: the URL with a scheme, or the path with its leading slash.
func parseURL(s string, paths bool) (*url.URL, error) {
	full := s
	if paths && strings.HasPrefix(s, "/") && !strings.HasPrefix(s, "//") {
		full = robotsTestOrigin + s
	}
	if u, err := url.Parse(full); err == nil && isHTTP(u) {
		return u, nil
	}
	msg := fmt.Sprintf("%q is not an absolute http or https URL", s)
	guess := withScheme(s)
	if paths && !strings.HasPrefix(s, "/") && !strings.Contains(s, "://") {
		msg += `, nor a path: a path must start with "/"`
		if guess == "" {
			guess = "/" + s
		}
	}
	if guess != "" {
		msg += "; did you mean " + guess + "?"
	}
	return nil, errors.New(msg)
}

// parseURLs parses URL arguments, as urlArgs returns them.
func parseURLs(args []string) ([]*url.URL, error) {
	urls := make([]*url.URL, 0, len(args))
	for _, s := range args {
		u, err := parseURL(s, false)
		if err != nil {
			return nil, err
		}
		urls = append(urls, u)
	}
	return urls, nil
}

func isHTTP(u *url.URL) bool {
	scheme := strings.ToLower(u.Scheme)
	return (scheme == "http" || scheme == "https") && u.Host != ""
}

// withScheme returns s with the scheme http put in front, when s has none
// and starts with what looks like a host, as "example.com/x",
// "localhost:8080/x" or "//example.com/x" do; otherwise "".
func withScheme(s string) string {
	if u, err := url.Parse(s); err == nil && u.Scheme != "" && !isPort(u.Opaque) {
		return "" // a scheme, and not the host of host:port
	}
	var guess string
	switch {
	case strings.HasPrefix(s, "//"):
		guess = "http:" + s
	case looksLikeHost(s):
		guess = "http://" + s
	default:
		return ""
	}
	if u, err := url.Parse(guess); err != nil || !isHTTP(u) {
		return ""
	}
	return guess
}

// isPort reports whether s, the opaque part of what url.Parse took for a
// scheme, begins with a port number: "8080/x" of "localhost:8080/x".
func isPort(s string) bool {
	digits := len(s) - len(strings.TrimLeft(s, "0123456789"))
	return digits > 0 && (digits == len(s) || s[digits] == '/' || s[digits] == '?')
}

// looksLikeHost reports whether the first segment of s names a host rather
// than a directory or a word: it has a dot or a port, or it is "localhost".
func looksLikeHost(s string) bool {
	first, _, _ := strings.Cut(s, "/")
	return strings.ContainsAny(first, ".:") || strings.EqualFold(first, "localhost")
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
