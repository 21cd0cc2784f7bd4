package polite

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/temoto/robotstxt"
)

// robotsRules is what the transport knows of one origin's robots.txt. It is
// immutable once built, but for the per-agent matchers it compiles lazily.
type robotsRules struct {
	url       string         // "scheme://host:port/robots.txt"
	status    int            // HTTP status of the last fetch; 0 when no response came
	fetchedAt time.Time      // when the last fetch ended
	duration  time.Duration  // how long the last fetch took
	err       string         // why the file is unreachable; "" when it was reached
	file      *robotsFile    // nil when no file applies (4xx, or unreachable)
	disallow  bool           // unreachable under FailClosed: refuse every URL
	stale     bool           // the last fetch failed; these rules are the last good copy
	blocked   *atomic.Uint64 // requests refused, shared by every copy of one origin's rules

	last atomic.Pointer[agentRules] // the most recently used matcher, read without locking

	mu     sync.Mutex             // guards agents
	agents map[string]*agentRules // matchers by product token; bounded by maxAgents
}

// good reports whether r came from a robots.txt that was reached, now or,
// for a stale copy, before.
func (r *robotsRules) good() bool { return r.err == "" || r.stale }

// reason says why rules refuse every URL: robots.txt unreachable under
// FailClosed.
func (r *robotsRules) reason() string {
	return "robots.txt unreachable (" + r.err + "), and the policy is FailClosed"
}

// maxAgents bounds the matchers kept per origin, so that callers sending a
// new User-Agent with every request cannot grow memory without bound.
const maxAgents = 16

// forAgent returns the matcher for a lower-cased product token.
func (r *robotsRules) forAgent(token string) *agentRules {
	if a := r.last.Load(); a != nil && a.token == token {
		return a
	}
	r.mu.Lock()
	a := r.agents[token]
	r.mu.Unlock()
	if a == nil {
		a = compileAgent(r.file, token)
		r.mu.Lock()
		if r.agents == nil {
			r.agents = make(map[string]*agentRules)
		}
		if len(r.agents) < maxAgents {
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
type agentRules struct {
	token      string
	agent      string        // the group token that bound: the product token, "*", or "" for none
	crawlDelay time.Duration // the group's Crawl-delay, not clamped
	rules      []robotsRule  // the group's rules, Allow first
	group      *robotstxt.Group

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

// allowed reports whether path, normalised by normalizePath, may be fetched.
func (a *agentRules) allowed(path string) bool {
	return a.group == nil || a.group.Test(path)
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
