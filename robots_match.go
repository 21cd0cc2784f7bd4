package polite

import (
	"strings"
	"sync"
	"time"

	"github.com/temoto/robotstxt"
)

// maxAgents bounds the matchers kept per origin, so that callers sending a
// new User-Agent with every request cannot grow memory without bound.
const maxAgents = 16

// forAgent returns the matcher for a lower-cased product token.
func (r *robotsRecord) forAgent(token string) *agentRules {
	if a := r.last.Load(); a != nil && a.token == token {
		return a
	}
	r.mu.Lock()
	a := r.agents[token]
	if f := r.first; f != nil && f.token == token {
		a = f
	}
	r.mu.Unlock()
	if a == nil {
		a = compileAgent(r.file, token)
		r.mu.Lock()
		switch {
		case r.first == nil:
			r.first = a
		case r.first.token == token: // built twice at once
		case len(r.agents)+1 < maxAgents:
			if r.agents == nil {
				r.agents = make(map[string]*agentRules)
			}
			r.agents[token] = a
		}
		r.mu.Unlock()
	}
	r.last.Store(a)
	return a
}

// agentRules matches paths for one product token. The allow/disallow
// decision is temoto/robotstxt's, on a body that parseRobots has cleaned:
// only the rules of the group that binds the token, under "User-agent: *",
// Allow lines first so that of two equally long rules the Allow wins.
//
// temoto tries every rule on every path, and a wildcard rule as a regular
// expression, which costs microseconds. So allowed asks temoto about the
// whole group only when a wildcard rule may match the path; otherwise it
// asks about plain, the same group without its wildcard rules, which
// decides the same, since rules that do not match never change temoto's
// choice.
type agentRules struct {
	token      string
	agent      string        // the group token that bound: the product token, "*", or "" for none
	crawlDelay time.Duration // the group's Crawl-delay, not clamped
	rules      []robotsRule  // the group's rules, Allow first
	group      *robotstxt.Group
	plain      *robotstxt.Group // group less its wildcard rules: group itself if it has none, nil if it has only those
	wild       []wildcard       // what group's wildcard rules need to match

	explainOnce sync.Once
	singles     []*robotstxt.Group // one matcher per rule, built on the first refusal
}

func compileAgent(f *robotsFile, token string) *agentRules {
	a := &agentRules{token: token}
	if f == nil {
		return a
	}
	rules, delay, agent := f.rulesFor(token)
	a.agent, a.crawlDelay = agent, delay
	for _, allow := range []bool{true, false} {
		for _, r := range rules {
			if r.allow == allow {
				a.rules = append(a.rules, r)
			}
		}
	}
	if len(a.rules) > 0 {
		a.group = compileGroup(a.rules)
		a.plain, a.wild = a.group, nil
		var plain []robotsRule
		for _, r := range a.rules {
			if w, ok := wildcardOf(r.pattern); ok {
				a.wild = append(a.wild, w)
			} else {
				plain = append(plain, r)
			}
		}
		if len(a.wild) > 0 {
			a.plain = nil
			if len(plain) > 0 {
				a.plain = compileGroup(plain)
			}
		}
	}
	return a
}

// compileGroup hands temoto a clean robots.txt holding rules. Patterns come
// from normalizePath, so they hold no white space or '#', and temoto cannot
// reject them; if it ever did, the rules would be lost, so that case falls
// back to compiling rule by rule and keeping each one temoto accepts.
func compileGroup(rules []robotsRule) *robotstxt.Group {
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for _, r := range rules {
		b.WriteString(r.String())
		b.WriteByte('\n')
	}
	if data, err := robotstxt.FromString(b.String()); err == nil {
		return data.FindGroup("*")
	}
	if len(rules) == 1 {
		return nil
	}
	var kept []robotsRule
	for _, r := range rules {
		if compileGroup([]robotsRule{r}) != nil {
			kept = append(kept, r)
		}
	}
	return compileGroup(kept)
}

// allowed reports whether path, normalised by normalizeTarget, may be
// fetched.
func (a *agentRules) allowed(path string) bool {
	if a.group == nil {
		return true
	}
	for _, w := range a.wild {
		if w.mayMatch(path) {
			return a.group.Test(path)
		}
	}
	return a.plain == nil || a.plain.Test(path)
}

// wildcard is what a match of a wildcard rule needs: temoto turns the
// pattern, less any trailing '*', into a regular expression in which '*'
// is ".*" and '$' is "$", and looks for it anywhere in the path. So the
// pattern's literal pieces must all occur in the path, in order, and when
// the pattern ends with a piece and '$', that piece must end the path.
type wildcard struct {
	pieces   []string // the pattern's literal parts, in order, none empty
	anchored bool     // the last piece ends the path
}

// wildcardOf returns the wildcard of a pattern that temoto matches as a
// regular expression, and ok=false for one it matches as a prefix.
func wildcardOf(pattern string) (w wildcard, ok bool) {
	p := strings.TrimRight(pattern, "*")
	if !strings.ContainsAny(p, "*$") {
		return w, false
	}
	w.pieces = strings.FieldsFunc(p, func(r rune) bool { return r == '*' || r == '$' })
	w.anchored = len(w.pieces) > 0 && strings.HasSuffix(p, w.pieces[len(w.pieces)-1]+"$")
	return w, true
}

// mayMatch reports false when the wildcard's rule cannot match path, and
// true when it may. Taking each piece at its first occurrence after the
// previous one never misses a match.
func (w wildcard) mayMatch(path string) bool {
	pieces := w.pieces
	if w.anchored {
		last := pieces[len(pieces)-1]
		if !strings.HasSuffix(path, last) {
			return false
		}
		path, pieces = path[:len(path)-len(last)], pieces[:len(pieces)-1]
	}
	for _, piece := range pieces {
		i := strings.Index(path, piece)
		if i < 0 {
			return false
		}
		path = path[i+len(piece):]
	}
	return true
}

// explain returns the rule that decides path, given the decision allowed:
// the longest rule of that kind that matches path on its own, as RFC 9309
// §2.2.2 ranks them. It returns "" when none does, as when no rule matches
// an allowed path.
func (a *agentRules) explain(path string, allowed bool) string {
	a.explainOnce.Do(func() {
		// One matcher per rule that answers "no" exactly when the rule
		// matches: a Disallow alone, or an Allow over "Disallow: /".
		a.singles = make([]*robotstxt.Group, len(a.rules))
		for i, r := range a.rules {
			rules := []robotsRule{r}
			if r.allow {
				rules = append(rules, robotsRule{pattern: "/"})
			}
			a.singles[i] = compileGroup(rules)
		}
	})
	best := -1
	for i, g := range a.singles {
		r := a.rules[i]
		if g == nil || r.allow != allowed || g.Test(path) != r.allow {
			continue // another kind, or no match
		}
		if best < 0 || len(r.pattern) > len(a.rules[best].pattern) {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	return a.rules[best].String()
}
