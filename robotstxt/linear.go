package robotstxt

import "strings"

// linearLimit is the work that linearMatch may do, in units of a rule
// tried, 32 octets of a pattern compared, or 4 octets of the path
// searched with strings.Index: a few microseconds, so that trying a
// group's rules in turn before compiling it never costs much.
const linearLimit = 4 << 10

// linearUnits returns the units that linearMatch spends on r before it
// searches the path.
func linearUnits(r *fileRule) int { return 1 + len(r.pattern)/32 }

// linearMatch returns the rule of rules that decides path, normalised by
// normalizeTarget, by trying each rule in turn: the rule that
// ruleMatcher.match returns, without compiling. ok is false when that
// would take more than linearLimit units of work, and then the rule is
// not known; the compiled matcher decides.
func linearMatch(rules []fileRule, path string) (best ruleRef, ok bool) {
	best = noRule
	units := 0
	for i := range rules {
		r := &rules[i]
		if units += linearUnits(r); units > linearLimit {
			return best, false
		}
		ref := ruleRef{rank: rankOf(r), rule: int32(i)}
		if r.pattern != "" && ref.beats(best) && globMatches(r.pattern, path, &units) {
			best = ref
		}
	}
	return best, units <= linearLimit
}

// globMatches reports whether pattern, not empty, matches path as RFC 9309
// §2.2.3 says, read as shapeOf reads it: each piece placed at its leftmost
// occurrence after the one before, which leaves the most path for what
// follows. It adds to units a unit for each piece and each 4 octets it
// searches. Each search starts where the one before ended, so it searches
// each octet of path once, and takes time O(len(path) + len(pattern)).
func globMatches(pattern, path string, units *int) bool {
	body, anchored := strings.CutSuffix(pattern, "$")
	if strings.IndexByte(body, '$') >= 0 {
		body = strings.ReplaceAll(body, "$", "%24")
	}
	head, rest, wild := strings.Cut(body, "*")
	switch {
	case !strings.HasPrefix(path, head):
		return false
	case !wild:
		return !anchored || len(path) == len(head)
	}
	pos, end := len(head), len(path)
	if anchored {
		i := strings.LastIndexByte(rest, '*')
		tail := rest[i+1:]
		if !strings.HasSuffix(path[pos:], tail) {
			return false
		}
		end -= len(tail)
		rest = rest[:max(i, 0)]
	}
	for rest != "" {
		var piece string
		piece, rest, _ = strings.Cut(rest, "*")
		if piece == "" {
			continue
		}
		i := strings.Index(path[pos:end], piece)
		if i < 0 {
			*units += 1 + (end-pos)/4
			return false
		}
		*units += 1 + (i+len(piece))/4
		pos += i + len(piece)
	}
	return true
}
