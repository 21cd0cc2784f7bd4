package audit

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/polite-go/polite/robotstxt"
)

// Robots is one version of a site's robots.txt, in force from its date
// until the next version's.
type Robots struct {
	path string
	from int64 // Unix nanoseconds; math.MinInt64 for a file given without a date
	file *robotstxt.File
	// tokens are the product tokens that the file's groups name, "*" apart,
	// as the engine binds them.
	tokens []string
}

// A RobotsFile is a robots.txt file to read, and when it came into force.
type RobotsFile struct {
	Path string
	From time.Time // the zero Time for a file in force from the start
}

// LoadRobots reads the robots.txt files and orders them by date. At most
// one may come without a date: it is in force from the start. A file none
// of whose lines is robots.txt (an HTML page, say) is an error: every
// crawler would read it as allowing everything.
func LoadRobots(files []RobotsFile) ([]Robots, error) {
	var versions []Robots
	for _, rf := range files {
		body, err := os.ReadFile(rf.Path)
		if err != nil {
			return nil, err
		}
		f := robotstxt.Parse(body)
		if f.NumGroups() == 0 && len(f.Sitemaps()) == 0 && f.NumSkipped() > 0 {
			return nil, fmt.Errorf("%s: no line of it is robots.txt", rf.Path)
		}
		from := int64(math.MinInt64)
		if !rf.From.IsZero() {
			from = rf.From.UnixNano()
		}
		versions = append(versions, Robots{path: rf.Path, from: from, file: f, tokens: groupTokens(body, f)})
	}
	slices.SortStableFunc(versions, func(a, b Robots) int { return cmp.Compare(a.from, b.from) })
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
func versionAt(versions []Robots, t int64, hint int) int {
	if hint >= 0 && hint < len(versions) && versions[hint].from <= t &&
		(hint+1 == len(versions) || t < versions[hint+1].from) {
		return hint
	}
	i, _ := slices.BinarySearchFunc(versions, t, func(v Robots, t int64) int {
		if v.from <= t {
			return -1
		}
		return 1
	})
	return i - 1
}

// describeVersion says when a version is in force: "from the start", or
// "from 2026-03-01T00:00:00Z".
func describeVersion(v Robots) string {
	if v.from == math.MinInt64 {
		return "from the start"
	}
	return "from " + time.Unix(0, v.from).UTC().Format(time.RFC3339)
}
