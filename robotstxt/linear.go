package robotstxt

import "strings"

// linearMatch returns the rule of rules that decides path, normalised by
// normalizeTarget, by trying each rule in turn, and the budget left, as
// ruleMatcher.match does: the same rule, without compiling. A group
// decides so until it has decided a few paths (groupPart.match).
func linearMatch(rules []fileRule, path string, budget int) (ruleRef, int) {
	best := noRule
	for i := range rules {
		r := &rules[i]
		cost := 1 + len(r.pattern)/compareOctets
		if cost > budget {
			return best, -1
		}
		budget -= cost
		ref := ruleRef{rank: rankOf(r), rule: int32(i)}
		if r.pattern != "" && ref.beats(best) && globMatches(r.pattern, path, &budget) {
			best = ref
		}
	}
	return best, budget
}

// globMatches reports whether pattern, not empty, matches path as RFC 9309
// §2.2.3 says, read as shapeOf reads it: each piece placed at its leftmost
// occurrence after the one before, which leaves the most path for what
// follows. It charges budget for the octets it searches.
func globMatches(pattern, path string, budget *int) bool {
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
	for rest != "" && *budget >= 0 {
		var piece string
		piece, rest, _ = strings.Cut(rest, "*")
		if piece == "" {
			continue
		}
		i := strings.Index(path[pos:end], piece)
		if i < 0 {
			*budget -= 1 + (end-pos)/searchOctets
			return false
		}
		*budget -= 1 + (i+len(piece))/searchOctets
		pos += i + len(piece)
	}
	return *budget >= 0
}
