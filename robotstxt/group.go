package robotstxt

import (
	"strings"
	"time"
)

// Agent returns the group token that bound: the product token that the
// group names, "*", or "" when no group binds and so no rule applies.
func (g *Group) Agent() string { return g.group }

// AgentLines returns the numbers of the user-agent lines that bound: the
// lines, from 1, that name the group token, in each group of the file
// that binds, in the file's order; none when no group binds. With
// [Rule.Line] it says which lines of the file decided.
func (g *Group) AgentLines() []int {
	var lines []int
	if g.group == "" {
		return lines
	}
	for i := range g.file.groups {
		fg := &g.file.groups[i]
		for j, a := range fg.agents {
			if len(a) == len(g.group) && strings.EqualFold(a, g.group) {
				lines = append(lines, int(fg.agentLines[j]))
			}
		}
	}
	return lines
}

// CrawlDelay returns the group's Crawl-delay, the largest if its groups
// give several, or 0 if none does.
func (g *Group) CrawlDelay() time.Duration { return g.delay }

// NumRules returns the number of the group's Allow and Disallow rules. A
// group with none allows every path, so a caller can skip building one.
func (g *Group) NumRules() int { return g.rules }

// Decide decides whether the group lets a crawler fetch path, a URI's
// escaped path and query ([url.URL.RequestURI]), as RFC 9309 §2.2.2 and
// §2.2.3 say, and returns the rule that decided, or the zero [Rule] when
// none matched and so path is allowed. It normalises path's
// percent-encoding first, without allocating when path is already in
// normal form, and once the group is compiled allocates nothing to match.
// Unlike [File.Test], it does not exempt /robots.txt.
//
// A group with rules does not decide a path longer than [MaxPathLength]
// in normal form: Decide returns a [*DecideError] that matches
// [ErrPathTooLong], with allowed false.
func (g *Group) Decide(path string) (allowed bool, rule Rule, err error) {
	if g.rules == 0 {
		return true, Rule{}, nil
	}
	if len(path) > 3*MaxPathLength { // its normal form is longer still: spare making it
		return false, Rule{}, &DecideError{Length: len(path), Err: ErrPathTooLong}
	}
	target := normalizeTarget(path)
	if len(target) > MaxPathLength {
		return false, Rule{}, &DecideError{Length: len(path), Err: ErrPathTooLong}
	}
	var best ruleRef
	var rules []fileRule // of the matcher or part that decided
	var left int
	if m := g.single.Load(); m != nil { // the common case, spared a loop
		best, left = m.match(target, workBudget(len(target)))
		rules = m.rules
	} else {
		best, rules, left = g.decide(target, workBudget(len(target)))
		if len(g.parts) == 1 {
			g.single.Store(g.parts[0].matcher.Load()) // once compiled
		}
	}
	switch {
	case left < 0:
		return false, Rule{}, &DecideError{Length: len(path), Err: ErrTooComplex}
	case best.rule < 0:
		return true, Rule{}, nil
	}
	return best.allow(), rules[best.rule].exported(), nil
}

// decide returns the rule that decides target, a path in normal form, and
// the rules of the part it is a rule of, nil for none; and what is left of
// budget, which is negative when the decision needed more.
func (g *Group) decide(target string, budget int) (best ruleRef, rules []fileRule, left int) {
	best = noRule
	for _, p := range g.parts {
		var ref ruleRef
		if ref, budget = p.match(target, budget); budget < 0 {
			break
		}
		if ref.rank > best.rank { // of two as long, the first part's
			best, rules = ref, p.rules
		}
	}
	return best, rules, budget
}
