package robotstxt

import "time"

// Agent returns the group token that bound: the product token that the
// group names, "*", or "" when no group binds and so no rule applies.
func (g *Group) Agent() string { return g.group }

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
	var from, left int
	if m := g.single.Load(); m != nil { // the common case, spared a loop
		best, left = m.match(target, workBudget(len(target)))
		if from = 0; best.rule < 0 {
			from = -1
		}
	} else {
		best, from, left = g.decide(target, workBudget(len(target)))
		if len(g.parts) == 1 {
			g.single.Store(g.parts[0].matcher.Load()) // once compiled
		}
	}
	switch {
	case left < 0:
		return false, Rule{}, &DecideError{Length: len(path), Err: ErrTooComplex}
	case from < 0:
		return true, Rule{}, nil
	}
	return best.allow(), g.parts[from].rules[best.rule], nil
}

// decide returns the rule that decides target, a path in normal form, and
// the index of the part it is a rule of, -1 for none; and what is left of
// budget, which is negative when the decision needed more.
func (g *Group) decide(target string, budget int) (best ruleRef, from, left int) {
	best, from = noRule, -1
	for i, p := range g.parts {
		var ref ruleRef
		if ref, budget = p.match(target, budget); budget < 0 {
			break
		}
		if ref.rank > best.rank { // of two as long, the first part's
			best, from = ref, i
		}
	}
	return best, from, budget
}
