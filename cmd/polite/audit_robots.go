package main

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/polite-go/polite/robotstxt"
)

// A robotsVersion is one robots.txt of audit's -robots, in force from its
// date until the next version's.
type robotsVersion struct {
	path string
	from int64 // Unix nanoseconds; math.MinInt64 for a file given without a date
	file *robotstxt.File
	// tokens are the product tokens that the file's groups name, "*" apart,
	// as the engine binds them.
	tokens []string
}

// robotsFlag collects -robots values: FILE, or DATE=FILE.
type robotsFlag []robotsArg

type robotsArg struct {
	path string
	from int64
}

func (f *robotsFlag) String() string { return "" }

// Set reads FILE or DATE=FILE. DATE is 2006-01-02, midnight UTC, or an RFC
// 3339 time; a value whose part before '=' is no date is all a file name.
func (f *robotsFlag) Set(v string) error {
	arg := robotsArg{path: v, from: math.MinInt64}
	if date, path, ok := strings.Cut(v, "="); ok {
		if t, ok := parseRobotsDate(date); ok {
			arg = robotsArg{path: path, from: t.UnixNano()}
		}
	}
	if arg.path == "" {
		return errors.New("no file name")
	}
	*f = append(*f, arg)
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

// loadRobots reads the files of -robots and orders them by date. At most one
// may come without a date: it is in force from the start.
func loadRobots(args robotsFlag) ([]robotsVersion, error) {
	if len(args) == 0 {
		return nil, errors.New("no -robots FILE given")
	}
	var versions []robotsVersion
	for _, a := range args {
		body, err := os.ReadFile(a.path)
		if err != nil {
			return nil, err
		}
		f := robotstxt.Parse(body)
		if f.NumGroups() == 0 && len(f.Sitemaps()) == 0 && f.NumSkipped() > 0 {
			return nil, fmt.Errorf("%s: no line of it is robots.txt", a.path)
		}
		versions = append(versions, robotsVersion{path: a.path, from: a.from, file: f, tokens: groupTokens(body, f)})
	}
	slices.SortStableFunc(versions, func(a, b robotsVersion) int { return cmp.Compare(a.from, b.from) })
	for i := 1; i < len(versions); i++ {
		if versions[i].from == versions[i-1].from {
			if versions[i].from == math.MinInt64 {
				return nil, fmt.Errorf("%s and %s both lack a date: only one file may be in force from the start",
					versions[i-1].path, versions[i].path)
			}
			return nil, fmt.Errorf("%s and %s have the same date", versions[i-1].path, versions[i].path)
		}
	}
	return versions, nil
}

// groupTokens returns the product tokens that the groups of body name,
// "*" apart. Each user-agent line's token is a candidate, and the engine
// decides: a token is kept when f binds it to a group of that name.
func groupTokens(body []byte, f *robotstxt.File) []string {
	var tokens []string
	for line := range bytes.Lines(body) {
		if i := bytes.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		key, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		switch strings.ToLower(string(bytes.TrimSpace(key))) {
		case "user-agent", "useragent", "user agent":
		default:
			continue
		}
		tok := robotstxt.ProductToken(string(bytes.TrimSpace(value)))
		if tok != "" && !slices.Contains(tokens, tok) && f.Group(tok).Agent() == tok {
			tokens = append(tokens, tok)
		}
	}
	return tokens
}

// versionAt returns the index of the version in force at t, Unix
// nanoseconds, or -1 before the first; hint is the last index returned,
// which lines in time order make right nearly always.
func versionAt(versions []robotsVersion, t int64, hint int) int {
	if hint >= 0 && hint < len(versions) && versions[hint].from <= t &&
		(hint+1 == len(versions) || t < versions[hint+1].from) {
		return hint
	}
	i, _ := slices.BinarySearchFunc(versions, t, func(v robotsVersion, t int64) int {
		if v.from <= t {
			return -1
		}
		return 1
	})
	return i - 1
}

// describeVersion says when a version is in force: "from the start", or
// "from 2026-03-01T00:00:00Z".
func describeVersion(v robotsVersion) string {
	if v.from == math.MinInt64 {
		return "from the start"
	}
	return "from " + time.Unix(0, v.from).UTC().Format(time.RFC3339)
}
