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
	for i := range g.from.file.groups {
		for _, a := range g.from.file.agentsOf(i) {
			if len(a.name) == len(g.group) && strings.EqualFold(a.name, g.group) {
				lines = append(lines, int(a.line))
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
func (g *Group) NumRules() int { return int(g.rules) }

// Decide decides whether the group lets a crawler fetch path, a URI's
// escaped path and query ([url.URL.RequestURI]), as RFC 9309 §2.2.2 and
// §2.2.3 say, and returns the rule that decided, or the zero [Rule] when
// none matched and so path is allowed. It normalises path's
// percent-encoding first, without allocating when path is already in
// normal form, and once the group is compiled allocates nothing to match.
// Unlike [File.Test], it does not exempt /robots.txt.
//
// A group with rules decides every path of up to [MaxPathLength] octets
// in normal form, within the time the package doc states ("Cost"), unless
// [Group.Err] says when the group is bound that its rules are beyond it.
// It does not decide a longer path, nor any path against such a group:
// Decide returns a [*DecideError] that matches [ErrPathTooLong] or
// [ErrTooComplex], with allowed false.
func (g *Group) Decide(path string) (allowed bool, rule Rule, err error) {
	switch {
	case g.rules == 0:
		return true, Rule{}, nil
	case g.tooComplex:
		return false, Rule{}, &DecideError{Length: len(path), Err: ErrTooComplex}
	case len(path) > 3*MaxPathLength: // its normal form is longer still: spare making it
		return false, Rule{}, &DecideError{Length: len(path), Err: ErrPathTooLong}
	}
	target := normalizeTarget(path)
	if len(target) > MaxPathLength {
		return false, Rule{}, &DecideError{Length: len(path), Err: ErrPathTooLong}
	}
	var best ruleRef
	var rules []fileRule                // of the matcher or part that decided
	if m := g.single.Load(); m != nil { // the common case, spared a loop
		best, rules = m.match(target), m.rules
	} else {
		best, rules = g.decide(target)
		if len(g.parts) == 1 {
			g.hold(g.parts[0].loaded())
		}
	}
	if best.rule < 0 {
		return true, Rule{}, nil
	}
	return best.allow(), rules[best.rule].exported(), nil
}

// Err reports whether the group decides every path: nil when [Group.Decide]
// decides each path of up to [MaxPathLength] octets within the time the
// package doc states ("Cost"), else a [*DecideError] that matches
// [ErrTooComplex], whose Length is 0: the error of every Decide on it. It
// is known as soon as the group is bound, from the size of its rules: more
// than 1.5 MiB, in normal form, of patterns with a '*', more than a
// robots.txt of 500 KiB can hold.
func (g *Group) Err() error {
	if g.tooComplex {
		return &DecideError{Err: ErrTooComplex}
	}
	return nil
}

// decide returns the rule that decides target, a path in normal form, and
// the rules of the part it is a rule of, nil for none.
func (g *Group) decide(target string) (best ruleRef, rules []fileRule) {
	best = noRule
	for _, p := range g.parts {
		if ref := p.match(g.from, target); ref.rank > best.rank { // of two as long, the first part's
			best, rules = ref, p.rules
		}
	}
	return best, rules
}

// hold keeps m, the matcher of the Group's one part once compiled, in
// single, unless its File undid it meanwhile (account.go): an undone matcher
// that single held would keep its heap.
func (g *Group) hold(m *ruleMatcher) {
	if m != nil && g.single.CompareAndSwap(nil, m) && g.parts[0].loaded() != m {
		g.single.CompareAndSwap(m, nil)
	}
}
