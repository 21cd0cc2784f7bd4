package robotstxt

import (
	"net/url"
	"slices"
	"strings"
)

// A UsageRule is a Content-Usage rule (draft-ietf-aipref-attach-05 §3) or
// a Content-Signal line (Cloudflare's Content Signals Policy) of a
// robots.txt group.
type UsageRule struct {
	// Field is "Content-Usage" or "Content-Signal".
	Field string
	// Pattern is the rule's path pattern, normalised as a [Rule]'s; "" when
	// the line gives none, and the rule holds for every path.
	Pattern string
	// Statement is the statement of preferences as written, after the path.
	Statement string
	// Usage is what Statement says: the zero Usage when it does not parse,
	// and the line is then among [File.Skipped] too.
	Usage Usage
}

// String returns the rule as robots.txt writes it, as
// "Content-Usage: /ai-ok/ train-ai=y".
func (r UsageRule) String() string {
	if r.Pattern == "" {
		return r.Field + ": " + r.Statement
	}
	return r.Field + ": " + r.Pattern + " " + r.Statement
}

// rule reads the value of a robots.txt line in the vocabulary v: a path,
// when the value starts with '/', up to the first space or tab, then the
// statement (draft-ietf-aipref-attach-05 §3.2). normalized reports that
// the pattern was written anew by normalisation. A statement that does not
// parse gives the rule the zero Usage, and an error.
func (v *vocabulary) rule(value string) (r UsageRule, normalized bool, err error) {
	r.Field, r.Statement = v.field, value
	if value != "" && value[0] == '/' {
		end := strings.IndexAny(value, " \t")
		if end < 0 {
			end = len(value)
		}
		path := value[:end]
		r.Pattern = normalizePath(path)
		normalized = r.Pattern != path
		r.Statement = trimWS(value[end:])
	}
	r.Usage, err = v.parse(r.Statement)
	return r, normalized, err
}

// NumUsageRules returns the number of Content-Usage rules and
// Content-Signal lines in all groups.
func (r *File) NumUsageRules() int { return len(r.file.usage) }

// A GroupUsage is the Content-Usage rules and Content-Signal lines of one
// group of a file, as written.
type GroupUsage struct {
	// Agents are the names that the group's user-agent lines give, as
	// written: product tokens, or "*".
	Agents []string
	// Rules are its Content-Usage rules and Content-Signal lines, in order.
	Rules []UsageRule
}

// UsageGroups returns, in order, each group of the file that has
// Content-Usage rules or Content-Signal lines, with its names and those
// lines. A crawler is bound by the groups that [File.Group] says, not by
// each of these alone: groups that name one product token combine.
func (r *File) UsageGroups() []GroupUsage {
	var out []GroupUsage
	for i := range r.file.groups {
		if usage := r.file.usageOf(i); len(usage) > 0 {
			out = append(out, GroupUsage{Agents: r.file.agentNames(i), Rules: slices.Clone(usage)})
		}
	}
	return out
}

// Usage returns the usage preferences that the robots.txt states for u to
// userAgent, a User-Agent header value: those of the group that binds it,
// for u's path and query, when the group lets it fetch u. A URL that may
// not be crawled has none (draft-ietf-aipref-attach-05 §3.1), nor has one
// whose request names no path. It fails as [File.Test] and
// [Group.Usage] do, for a path the engine does not decide.
func (r *File) Usage(userAgent string, u *url.URL) (Usage, error) {
	b := r.Group(userAgent)
	if b.usage == 0 {
		return Usage{}, nil
	}
	path, ok := RequestPath(u)
	if !ok {
		return Usage{}, nil
	}
	if !isRobotsTxt(path) {
		if allowed, _, err := b.Decide(path); err != nil || !allowed {
			return Usage{}, err
		}
	}
	return b.Usage(path)
}

// NumUsageRules returns the number of the group's Content-Usage rules and
// Content-Signal lines. A group with none states no preference, so a
// caller can skip asking it.
func (g *Group) NumUsageRules() int { return int(g.usage) }

// Usage returns the usage preferences that the group states for path, a
// URI's escaped path and query, as [Group.Decide] takes it. It does not
// decide whether path may be crawled: preferences hold only for a path
// that may be, so ask Decide first, or use [File.Usage].
//
// The Content-Usage rules that match path, as Allow and Disallow rules
// match, with the most octets decide; a rule without a path matches every
// path with none. Of rules equally long that match, whatever their order,
// the statements combine, as [Usage.Combine] does
// (draft-ietf-aipref-attach-05 §3.1). The Content-Signal lines are chosen
// the same way, apart; then the two signals combine, the more restrictive
// winning for each use.
//
// The rules are tried in turn, each in time linear in the lengths of path
// and its pattern. A path longer than [MaxPathLength] is not decided, nor
// any path against a group of more than 1,000 such rules and lines, which
// [Group.NumUsageRules] tells once the group is bound: Usage returns a
// [*DecideError], matching [ErrPathTooLong] or [ErrTooComplex], and the
// zero Usage.
func (g *Group) Usage(path string) (Usage, error) {
	u, _, err := g.matchUsage(path, false)
	return u, err
}

// UsageRules returns the rules whose statements make [Group.Usage]'s
// answer for path: the Content-Usage rules that decide it, then the
// Content-Signal lines, each in the group's order. It fails as Usage does.
func (g *Group) UsageRules(path string) ([]UsageRule, error) {
	_, rules, err := g.matchUsage(path, true)
	return rules, err
}

// usageBest is the rules of one field that match best so far.
type usageBest struct {
	length int // the octets of their pattern; -1 before any matched
	usage  Usage
	rules  []UsageRule // when collected
}

func (b *usageBest) add(r *UsageRule, collect bool) {
	switch {
	case len(r.Pattern) > b.length:
		b.length, b.usage = len(r.Pattern), r.Usage
		if collect {
			b.rules = append(b.rules[:0], *r)
		}
	case len(r.Pattern) == b.length:
		b.usage = b.usage.Combine(r.Usage)
		if collect {
			b.rules = append(b.rules, *r)
		}
	}
}

// maxUsageRules is the most Content-Usage rules and Content-Signal lines
// that a Group decides Usage by: each is tried in turn.
const maxUsageRules = 1000

// matchUsage does the work of Usage and UsageRules.
func (g *Group) matchUsage(path string, collect bool) (Usage, []UsageRule, error) {
	switch {
	case g.usage == 0:
		return Usage{}, nil, nil
	case g.usage > maxUsageRules:
		return Usage{}, nil, &DecideError{Length: len(path), Err: ErrTooComplex}
	case len(path) > 3*MaxPathLength:
		return Usage{}, nil, &DecideError{Length: len(path), Err: ErrPathTooLong}
	}
	target := normalizeTarget(path)
	if len(target) > MaxPathLength {
		return Usage{}, nil, &DecideError{Length: len(path), Err: ErrPathTooLong}
	}
	var units int // of globMatches, which this does not count
	bestUsage, bestSignal := usageBest{length: -1}, usageBest{length: -1}
	for _, p := range g.parts {
		if p.usage == nil {
			continue
		}
		for i := range *p.usage {
			r := &(*p.usage)[i]
			best := &bestUsage
			if r.Field == contentSignal.field {
				best = &bestSignal
			}
			if len(r.Pattern) < best.length {
				continue // it cannot decide
			}
			if r.Pattern == "" || globMatches(r.Pattern, target, &units) {
				best.add(r, collect)
			}
		}
	}
	var rules []UsageRule
	if collect {
		rules = append(bestUsage.rules, bestSignal.rules...)
	}
	return bestUsage.usage.Combine(bestSignal.usage), rules, nil
}
