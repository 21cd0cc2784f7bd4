package robotstxt

import (
	"cmp"
	"slices"
	"strings"
	"sync"
)

// ruleMatcher decides paths against the rules of one group, or of the
// groups that give the same names, as RFC 9309 §2.2.2 and §2.2.3 say:
//
//   - A pattern is matched from the first octet of the path.
//   - '*' matches any run of octets, the empty run too.
//   - '$' as the last octet of a pattern means the end of the path. A '$'
//     anywhere else is the literal character, which normalizeTarget writes
//     in a path as "%24", so the engine reads it as "%24" there: "/a$b"
//     matches what "/a%24b" matches.
//   - Of the rules that match, the one whose pattern has the most octets
//     decides (patterns come from normalizePath, so octets are counted in
//     that form); of two equally long, an Allow wins, and of two as long
//     and of one kind, the first (beats). No match allows.
//
// Identical patterns are kept once; an Allow and a Disallow of one pattern
// are the Allow. An empty pattern matches nothing, as "Disallow:" with no
// path disallows nothing.
//
// # How it matches
//
// A pattern is a head, the literal before its first '*'; then, if it has a
// '*', pieces, the literals between '*'s, which must follow the head in the
// path in order and without overlapping; and, for a pattern that ends in
// '$', a tail, the literal after the last '*', which must end the path.
// Placing each piece at its leftmost occurrence after the one before is
// enough to tell whether a pattern matches, because it leaves the most path
// for what follows.
//
// The heads are kept sorted, each with the longest other head that is a
// prefix of it (prefixSet), so one binary search finds every head that
// begins the path: the deepest one and its chain of parents. A pattern
// without '*' is decided there. Each pattern with a '*' is filed under one
// key: its head, one of its pieces or its tail, whichever has the fewest
// patterns filed under it so far, and of those the longest; within a key,
// the longest pattern comes first. If such a pattern could beat what the
// heads decided, one pass of an Aho–Corasick automaton over the path finds
// the pieces and tails that occur, and where (scan). Then only the patterns
// filed under a head that begins the path or under a literal that occurs
// are tried, best first, and a list stops at its first match or at a
// pattern that could not beat the best match so far. A try checks the
// length of the path, the head, the tail and that each piece occurs, then
// places the pieces, most of them from what the scan recorded; for a piece
// that occurs more often than the scan records, all its occurrences are
// found with strings.Index, once a decision (findAll).
//
// # Cost
//
// The compiled form shares the rules' text and adds 40 bytes a distinct
// head, 28 bytes a pattern with a '*' and 4 bytes a piece (8 if the pattern
// repeats a literal), 24 bytes a distinct piece or tail, 16 bytes a node of
// the automaton, at most one an octet of those literals, and 512 bytes for
// the automaton's root. That is linear in the rules: for the 500 KiB files
// of engine_bench_test.go, 1.2 times the bytes of the rules' lines
// for plain rules, 3.4 for distinct "/*x<N>*y$" rules and 12 for rules of
// random 12-octet pieces, the most found (TestRuleMatcherSize). A decision
// also borrows scratch space, 36 bytes a literal, from a sync.Pool.
//
// A decision allocates nothing. For a path of n octets and h distinct
// heads it costs O(n log h) to find the heads and O(n) for the automaton,
// whose record of occurrences holds at most occCap a literal. Then, for
// each pattern tried, it costs O(k log n) for the pattern's k pieces, plus
// one search of the path for each literal that occurs more than occCap
// times and is placed past those. A pattern is tried only if its key
// begins the path or occurs in it. What the patterns tried cost grows
// with the file, not the path, so a decision also counts its work
// (workBudget) and stops at its budget. BenchmarkEngineWorst records the
// worst files found, with paths of 2 and 8 KiB.
type ruleMatcher struct {
	rules []fileRule // the rules given to compileRules, which match names by index
	heads prefixSet  // the distinct heads
	plain []ruleRef  // per head: the best pattern with this head, no '*' and no final '$'
	exact []ruleRef  // per head: the best pattern with this head, no '*' and a final '$'
	// The patterns with a '*', filed by key: those under head h are
	// wild[headKeys[h]:headKeys[h+1]], those under literal l
	// wild[litKeys[l]:litKeys[l+1]], best first.
	wild     []wildRule
	headKeys []int32
	litKeys  []int32
	litTop   []int32  // per literal: the rank of the best pattern filed under it; -1 if none
	pieces   []int32  // the pieces of wild, as literal indexes, rule after rule
	lits     []string // the distinct pieces and tails, sorted
	ac       automaton
	maxWild  ruleRef // the best of wild, whether or not it matches; none if empty
	scanCost int     // units of work (workBudget) that a step of ac costs
}

// ruleRef names a rule with its rank: twice the length of its pattern,
// plus 1 for an Allow, so that the higher rank decides (§2.2.2). rule is
// the rule's index in the slice given to compileRules.
type ruleRef struct {
	rank int32
	rule int32
}

var noRule = ruleRef{rank: -1, rule: -1}

func rankOf(r *fileRule) int32 {
	if r.allow {
		return int32(2*len(r.pattern) + 1)
	}
	return int32(2 * len(r.pattern))
}

// beats reports whether r decides over o: a longer pattern, or an Allow
// of the same length over a Disallow, or of two rules of the same length
// and kind the one first in the group. So every way of matching reports
// the same rule.
func (r ruleRef) beats(o ruleRef) bool {
	return r.rank > o.rank || r.rank == o.rank && r.rule < o.rule
}

func (r ruleRef) allow() bool { return r.rank&1 == 1 }

// wildRule is a pattern with a '*'. Its pieces are pieces[from:seqEnd],
// in order; if they repeat a literal, pieces from seqEnd up to the next
// wildRule's from hold each of them once.
type wildRule struct {
	ruleRef
	head   int32 // index into heads
	from   int32
	seqEnd int32
	tail   int32 // literal index of its tail, or -1
	minLen int32 // the octets of its head, pieces and tail: a shorter path cannot match
}

// shape is a pattern taken apart into its head, pieces and tail.
type shape struct {
	head   string
	pieces []string
	tail   string // "" when the pattern has none
	wild   bool   // the pattern has a '*'
	exact  bool   // no '*' and a final '$': the path must be the head
}

func shapeOf(pattern string) shape {
	body, anchored := strings.CutSuffix(pattern, "$")
	if strings.Contains(body, "$") {
		body = strings.ReplaceAll(body, "$", "%24")
	}
	head, rest, wild := strings.Cut(body, "*")
	s := shape{head: head, wild: wild, exact: anchored && !wild}
	for wild {
		var piece string
		piece, rest, wild = strings.Cut(rest, "*")
		switch {
		case wild && piece != "":
			s.pieces = append(s.pieces, piece)
		case !wild && anchored:
			s.tail = piece
		case !wild && piece != "":
			s.pieces = append(s.pieces, piece)
		}
	}
	return s
}

// compileRules builds the matcher of rules. match reports rules by their
// index in this slice.
func compileRules(rules []fileRule) *ruleMatcher {
	m := &ruleMatcher{rules: rules, maxWild: noRule, scanCost: 1}

	// Order the patterns by head, then pattern, the Allow of a pattern
	// first: the distinct heads come in order, and a pattern's first rule
	// is the one kept.
	entries := make([]headEntry, 0, len(rules))
	for i, r := range rules {
		if r.pattern != "" {
			entries = append(entries, headEntry{headOf(r.pattern), int32(i)})
		}
	}
	slices.SortFunc(entries, func(a, b headEntry) int {
		ra, rb := &rules[a.rule], &rules[b.rule]
		return cmp.Or(strings.Compare(a.head, b.head), strings.Compare(ra.pattern, rb.pattern),
			boolOrder(ra.allow, rb.allow), cmp.Compare(a.rule, b.rule))
	})
	entries = slices.CompactFunc(entries, func(a, b headEntry) bool { return rules[a.rule].pattern == rules[b.rule].pattern })
	keys := make([]string, 0, len(entries))
	for i, e := range entries {
		if i == 0 || e.head != entries[i-1].head {
			keys = append(keys, e.head)
		}
	}
	m.heads = newPrefixSet(keys)

	// Patterns without '*' go to their head; the others are filed by key.
	refs := make([]ruleRef, 2*len(keys))
	for i := range refs {
		refs[i] = noRule
	}
	m.plain, m.exact = refs[:len(keys):len(keys)], refs[len(keys):]
	var wild []wildRule // from and seqEnd index pieces, for now
	var pieces []int32
	var uses []litUse
	h := -1
	for i, e := range entries {
		if i == 0 || e.head != entries[i-1].head {
			h++
		}
		pattern := rules[e.rule].pattern
		ref := ruleRef{rank: rankOf(&rules[e.rule]), rule: e.rule}
		switch star := strings.IndexByte(pattern, '*'); {
		case star < 0 && pattern[len(pattern)-1] == '$':
			if ref.beats(m.exact[h]) {
				m.exact[h] = ref
			}
		case star < 0:
			if ref.beats(m.plain[h]) {
				m.plain[h] = ref
			}
		default:
			s := shapeOf(pattern)
			w := wildRule{ruleRef: ref, head: int32(h), tail: -1, minLen: int32(len(s.head) + len(s.tail))}
			if s.tail != "" {
				uses = append(uses, litUse{s.tail, -1 - int32(len(wild))})
			}
			w.from = int32(len(pieces))
			for _, p := range s.pieces {
				uses = append(uses, litUse{p, int32(len(pieces))})
				pieces = append(pieces, -1)
				w.minLen += int32(len(p))
			}
			w.seqEnd = int32(len(pieces))
			wild = append(wild, w)
		}
	}
	if len(wild) == 0 {
		return m
	}
	// Number the distinct literals in sorted order.
	slices.SortFunc(uses, func(a, b litUse) int { return strings.Compare(a.lit, b.lit) })
	distinct := 0
	for i, u := range uses {
		if i == 0 || u.lit != uses[i-1].lit {
			distinct++
		}
	}
	m.lits = make([]string, 0, distinct)
	for i, u := range uses {
		if i == 0 || u.lit != uses[i-1].lit {
			m.lits = append(m.lits, u.lit)
		}
		l := int32(len(m.lits) - 1)
		if u.at >= 0 {
			pieces[u.at] = l
		} else {
			wild[-1-u.at].tail = l
		}
	}
	m.fileWild(wild, pieces)
	if len(m.lits) > 0 {
		m.ac = newAutomaton(m.lits)
	}
	if len(m.ac.nodes) > smallAutomaton {
		m.scanCost = 3
	}
	return m
}

// headEntry is a rule, by its index, and the head of its pattern.
type headEntry struct {
	head string
	rule int32
}

// headOf returns the head of pattern, as shapeOf does, allocating only
// when pattern has a '$' that is not its last octet.
func headOf(pattern string) string {
	body, _ := strings.CutSuffix(pattern, "$")
	if strings.IndexByte(body, '$') >= 0 {
		body = strings.ReplaceAll(body, "$", "%24")
	}
	head, _, _ := strings.Cut(body, "*")
	return head
}

// litUse is a literal of a pattern and where its index goes: pieces[at],
// or for at < 0 the tail of wild[-1-at].
type litUse struct {
	lit string
	at  int32
}

// boolOrder orders true before false.
func boolOrder(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}

// fileWild files each pattern of wild, whose pieces are in pieces, under
// its key, as the doc of ruleMatcher says, and lays out m.wild key by key,
// best first within a key, with their pieces in m.pieces in the same
// order.
func (m *ruleMatcher) fileWild(wild []wildRule, pieces []int32) {
	best := make([]int32, len(wild)) // wild's indexes, best first
	for i := range best {
		best[i] = int32(i)
	}
	slices.SortFunc(best, func(a, b int32) int {
		return cmp.Or(cmp.Compare(wild[b].rank, wild[a].rank), cmp.Compare(wild[a].rule, wild[b].rule))
	})
	if len(wild) > 0 {
		m.maxWild = wild[best[0]].ruleRef
	}
	nh := int32(len(m.heads.keys))
	count := make([]int32, int(nh)+len(m.lits)) // patterns filed under each key: heads, then literals
	keyOf := make([]int32, len(wild))
	for _, i := range best {
		w := &wild[i]
		key, size := w.head, len(m.heads.keys[w.head])
		consider := func(l int32) {
			k := nh + l
			if count[k] < count[key] || count[k] == count[key] && len(m.lits[l]) > size {
				key, size = k, len(m.lits[l])
			}
		}
		for _, l := range pieces[w.from:w.seqEnd] {
			consider(l)
		}
		if w.tail >= 0 {
			consider(w.tail)
		}
		keyOf[i] = key
		count[key]++
	}
	// A counting sort by key keeps each key's patterns best first.
	starts := make([]int32, len(count)+1)
	for k, c := range count {
		starts[k+1] = starts[k] + c
	}
	m.headKeys, m.litKeys = starts[:nh+1], starts[nh:]
	place := make([]int32, len(wild))
	next := slices.Clone(starts[:len(count)])
	for _, i := range best {
		k := keyOf[i]
		place[next[k]] = i
		next[k]++
	}
	m.wild = make([]wildRule, len(wild))
	m.pieces = make([]int32, 0, len(pieces))
	for j, i := range place {
		w := wild[i]
		seq := pieces[w.from:w.seqEnd]
		w.from = int32(len(m.pieces))
		m.pieces = append(m.pieces, seq...)
		w.seqEnd = int32(len(m.pieces))
		m.pieces = appendDistinct(m.pieces, seq)
		m.wild[j] = w
	}
	if cap(m.pieces) > len(m.pieces) { // repeated literals made it grow
		m.pieces = slices.Clone(m.pieces)
	}
	m.litTop = make([]int32, len(m.lits))
	for l := range m.litTop {
		m.litTop[l] = -1
		if from := m.litKeys[l]; from < m.litKeys[l+1] {
			m.litTop[l] = m.wild[from].rank
		}
	}
}

// appendDistinct appends to pieces the literals of seq without repeats, if
// seq has repeats.
func appendDistinct(pieces, seq []int32) []int32 {
	if len(seq) < 2 {
		return pieces
	}
	sorted := slices.Clone(seq)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	if len(sorted) == len(seq) {
		return pieces
	}
	return append(pieces, sorted...)
}

// match returns the rule that decides path, normalised by
// normalizeTarget: the best of the rules that match it, with its index in
// the rules given to compileRules; noRule when none matches, and so path
// is allowed. It spends at most budget units of work (see workBudget) and
// returns what is left: a negative number when the decision needed more,
// and then the rule returned is not known to decide.
func (m *ruleMatcher) match(path string, budget int) (ruleRef, int) {
	best := noRule
	budget -= m.heads.searchCost(len(path))
	deepest := m.heads.deepest(path)
	steps := 0
	for h := deepest; h >= 0; h = m.heads.parent[h] {
		steps++
		if m.plain[h].beats(best) {
			best = m.plain[h]
		}
		if len(m.heads.keys[h]) == len(path) && m.exact[h].beats(best) {
			best = m.exact[h]
		}
	}
	budget -= steps / 4
	if m.maxWild.beats(best) && budget >= 0 {
		best, budget = m.matchWild(path, deepest, best, budget)
	}
	return best, budget
}

// matchWild returns the better of best and the best pattern with a '*'
// that matches path, and the budget left. deepest is the longest head that
// begins path, or -1.
func (m *ruleMatcher) matchWild(path string, deepest int32, best ruleRef, budget int) (ruleRef, int) {
	st := getMatchState(len(m.lits), budget)
	for h := deepest; h >= 0 && st.budget >= 0; h = m.heads.parent[h] {
		best = m.try(st, path, m.headKeys[h], m.headKeys[h+1], best, true)
	}
	if filedUnderLits := int(m.litKeys[0]) < len(m.wild); filedUnderLits && m.maxWild.beats(best) && st.budget >= 0 {
		if !st.scanned {
			m.scan(st, path)
		}
		for _, l := range st.found {
			if st.budget < 0 {
				break
			}
			if m.litTop[l] >= best.rank { // an equal rank may come first in the group
				best = m.try(st, path, m.litKeys[l], m.litKeys[l+1], best, false)
			}
		}
	}
	budget = st.budget
	matchStates.Put(st)
	return best, budget
}

// try returns the better of best and the first of the patterns wild[from:to],
// which are best first, that matches path. headed tells that their heads
// begin path.
func (m *ruleMatcher) try(st *matchState, path string, from, to int32, best ruleRef, headed bool) ruleRef {
	for i := from; i < to; i++ {
		w := &m.wild[i]
		if !w.beats(best) {
			break
		}
		if st.budget--; st.budget < 0 {
			return best
		}
		if m.wildMatches(st, path, i, headed) {
			return w.ruleRef
		}
	}
	return best
}

// wildMatches reports whether wild[i] matches path. headed tells that its
// head begins path. It reports false when the budget runs out.
func (m *ruleMatcher) wildMatches(st *matchState, path string, i int32, headed bool) bool {
	w := &m.wild[i]
	n := int32(len(path))
	head := m.heads.keys[w.head]
	if n < w.minLen {
		return false
	}
	if !headed {
		st.budget -= len(head) / compareOctets
		if !strings.HasPrefix(path, head) {
			return false
		}
	}
	end := n // where the pieces must end
	if w.tail >= 0 {
		tail := m.lits[w.tail]
		st.budget -= len(tail) / compareOctets
		if !strings.HasSuffix(path, tail) {
			return false
		}
		end -= int32(len(tail))
	}
	pieces := m.pieces[w.from:w.seqEnd]
	if len(pieces) == 0 {
		return true
	}
	if !st.scanned {
		m.scan(st, path)
	}
	for _, l := range m.literals(i) {
		if st.budget--; st.lits[l].seen != st.gen || st.budget < 0 {
			return false
		}
	}
	pos := int32(len(head))
	for _, l := range pieces {
		if st.budget--; st.budget < 0 {
			return false
		}
		at := m.next(st, path, l, pos)
		if at < 0 {
			return false
		}
		pos = at + int32(len(m.lits[l]))
	}
	return pos <= end
}

// literals returns the pieces of wild[i] without repeats.
func (m *ruleMatcher) literals(i int32) []int32 {
	w := &m.wild[i]
	end := int32(len(m.pieces))
	if int(i)+1 < len(m.wild) {
		end = m.wild[i+1].from
	}
	if end > w.seqEnd {
		return m.pieces[w.seqEnd:end]
	}
	return m.pieces[w.from:w.seqEnd]
}

// next returns where the first occurrence of literal l at or after pos
// starts, or -1 if there is none. l occurs in path.
func (m *ruleMatcher) next(st *matchState, path string, l, pos int32) int32 {
	lit := m.lits[l]
	size := int32(len(lit))
	ls := &st.lits[l]
	if first := ls.firstEnd - size; first >= pos {
		return first
	}
	if !st.lasts {
		if st.budget -= len(st.hits); st.budget < 0 {
			return -1 // the decision stops
		}
		m.lastEnds(st)
	}
	last := ls.lastEnd - size
	if last < pos {
		return -1
	}
	if st.occ[ls.occTail].end-size >= pos { // one of the recorded occurrences
		for k := ls.occHead; ; k = st.occ[k].next {
			st.budget--
			if start := st.occ[k].end - size; start >= pos {
				return start
			}
		}
	}
	if ls.count < occCap {
		return last // not reached: the recorded occurrences are all there are
	}
	if path[pos:pos+size] == lit { // as when a pattern repeats a piece
		return pos
	}
	// An occurrence after the recorded ones: find them all, once a
	// decision, and search them.
	if ls.extGen != st.gen {
		m.findAll(st, path, l)
	}
	ext := st.ext[ls.extFrom:ls.extTo]
	k, _ := slices.BinarySearch(ext, pos)
	if k == len(ext) {
		return -1 // only when findAll ran out of budget
	}
	return ext[k] // the last occurrence starts at or after pos
}

// findAll records in st.ext where each occurrence of literal l after the
// recorded ones starts, and charges the budget for the search; it stops
// with the budget.
func (m *ruleMatcher) findAll(st *matchState, path string, l int32) {
	lit := m.lits[l]
	ls := &st.lits[l]
	ls.extGen, ls.extFrom = st.gen, int32(len(st.ext))
	from := int(st.occ[ls.occTail].end) - len(lit) + 1
	if st.budget -= (len(path) - from) / searchOctets; st.budget < 0 {
		ls.extTo = ls.extFrom
		return
	}
	for st.budget >= 0 { // else the decision stops, and so does this list
		i := strings.Index(path[from:], lit)
		if i < 0 {
			break
		}
		st.ext = append(st.ext, int32(from+i))
		st.budget--
		from += i + 1
	}
	ls.extTo = int32(len(st.ext))
}

// A decision spends at most workBudget units of work, so that no file,
// however written, makes one take long (see Cost in the package doc). A
// unit is about one access to memory that may not be cached: one pattern
// tried, one literal checked or placed, one occurrence recorded or read,
// four heads walked, compareOctets octets compared or searchOctets octets
// searched with strings.Index. A step of the automaton, an octet read or a
// failure link followed, is one unit, or three when it has more than
// smallAutomaton nodes, which the caches of a processor do not hold.
const (
	compareOctets  = 32
	searchOctets   = 4
	smallAutomaton = 4 << 10
)

// workBudget returns the units of work that a decision on a path of n
// octets, in normal form, may spend: 3n + 1,024 + n²/2,560, so 8,806
// units for a path of 2 KiB and 51,814 for one of 8 KiB. On the worst
// files found (BenchmarkEngineWorst), a unit costs at most about 7 ns
// with a path of 2 KiB and 14 ns with one of 8 KiB on the machine of
// BENCHMARKS.md, so a decision stays within 100 µs and 1 ms; the costliest
// decision on the real files that corpus_test.go reads spends 14% of its
// budget.
func workBudget(n int) int { return 3*n + 1024 + n*n/2560 }

// occCap is how many occurrences of each literal scan records.
const occCap = 16

// scan runs the automaton over path and records the literals that occur,
// with where each of the first occCap occurrences of each ends, and the
// places where literals end, for lastEnds.
//
// The literals that end at one place are a chain, each a suffix of the one
// before, so each has occurred at least as often as the one before: once
// one has occCap occurrences, so have those after it, and the walk down
// the chain stops there. Recording thus costs at most occCap steps a
// literal besides one a place.
func (m *ruleMatcher) scan(st *matchState, path string) {
	st.scanned = true
	// A step for each octet is charged now; the steps back along failure
	// links, at most one an octet, as they come.
	budget, step := st.budget-len(path)*m.scanCost, m.scanCost
	if st.budget = budget; budget < 0 {
		return
	}
	st.hits = st.hits[:0]
	a := &m.ac
	root, nodes := a.root, a.nodes
	s := int32(0)
	for i := 0; i < len(path); i++ {
		c := path[i]
		if s == 0 {
			for root[c] == 0 { // no literal starts here: skip
				if i++; i == len(path) {
					st.budget = budget
					return
				}
				c = path[i]
			}
			s = int32(root[c])
		} else { // the automaton's step by hand: most nodes within a literal have one child
			for {
				if lo, hi := nodes[s].first, nodes[s+1].first; hi-lo == 1 {
					if nodes[lo].label == c {
						s = lo
						break
					}
				} else if t := a.search(lo, hi, c); t != 0 {
					s = t
					break
				}
				if budget -= step; budget < 0 {
					st.budget = budget // what it found is not used
					return
				}
				if s = nodes[s].fail; s == 0 {
					s = int32(root[c])
					break
				}
			}
		}
		if nodes[s].out != 0 { // a literal ends here
			if budget = m.record(st, int32(i+1), s, budget); budget < 0 {
				break // what it found is not used
			}
		}
	}
	st.budget = budget
}

// record records the literals that end at end, where scan is in state s,
// which is or has a literal's node, as scan says; it returns what is left
// of budget, a unit a literal.
func (m *ruleMatcher) record(st *matchState, end, s int32, budget int) int {
	a := &m.ac
	st.hits = append(st.hits, acHit{end, s})
	for v := a.literalNode(s); v != 0; v = a.literalNode(a.nodes[v].fail) {
		if budget--; budget < 0 {
			break
		}
		l := -1 - a.nodes[v].out
		ls := &st.lits[l]
		if ls.seen != st.gen {
			*ls = litState{seen: st.gen, firstEnd: end, occHead: -1}
			if m.litKeys[l] < m.litKeys[l+1] {
				st.found = append(st.found, l)
			}
		} else if ls.count == occCap {
			break
		}
		k := int32(len(st.occ))
		st.occ = append(st.occ, occurrence{end: end, next: -1})
		if ls.count == 0 {
			ls.occHead = k
		} else {
			st.occ[ls.occTail].next = k
		}
		ls.occTail = k
		ls.count++
	}
	return budget
}

// lastEnds records where the last occurrence of each literal that occurs
// ends, reading the hits of scan backwards; its caller charges a unit a
// hit.
func (m *ruleMatcher) lastEnds(st *matchState) {
	st.lasts = true
	a := &m.ac
	for i := len(st.hits) - 1; i >= 0; i-- {
		h := st.hits[i]
		for v := a.literalNode(h.state); v != 0; v = a.literalNode(a.nodes[v].fail) {
			ls := &st.lits[-1-a.nodes[v].out]
			if ls.lastEnd != 0 {
				break
			}
			ls.lastEnd = h.end
		}
	}
}

// acHit is a place where the automaton finds a literal: the end of the
// octets read, and the state.
type acHit struct{ end, state int32 }

// occurrence is a recorded occurrence of a literal: where it ends, and the
// index of the literal's next recorded one, or -1.
type occurrence struct{ end, next int32 }

// matchState is what one decision needs besides the matcher; decisions
// borrow it from matchStates, so that they allocate nothing.
type matchState struct {
	gen     uint32
	scanned bool // scan has run
	lasts   bool // lastEnds has run
	budget  int  // the units of work the decision may still spend
	lits    []litState
	found   []int32 // the literals that occur and key patterns, by first end
	hits    []acHit
	occ     []occurrence
	ext     []int32 // the occurrences that findAll found, literal by literal
}

// litState is what a decision knows of one literal. The fields hold when
// seen is the decision's gen, the ones of findAll when extGen is too.
type litState struct {
	seen             uint32
	firstEnd         int32 // where its first occurrence ends
	lastEnd          int32 // where its last occurrence ends, once lastEnds has run
	count            int32 // occurrences recorded, at most occCap
	occHead, occTail int32 // the recorded occurrences, in order, in occ
	extGen           uint32
	extFrom, extTo   int32 // where its other occurrences start: ext[extFrom:extTo]
}

var matchStates = sync.Pool{New: func() any { return new(matchState) }}

// getMatchState returns a matchState for a matcher of lits literals and a
// decision that may spend budget units of work.
func getMatchState(lits, budget int) *matchState {
	st := matchStates.Get().(*matchState)
	if len(st.lits) < lits {
		st.lits = make([]litState, lits)
		st.gen = 0
	}
	st.gen++
	if st.gen == 0 { // wrapped: forget every old entry
		clear(st.lits)
		st.gen = 1
	}
	st.scanned, st.lasts, st.budget = false, false, budget
	st.found, st.occ, st.ext = st.found[:0], st.occ[:0], st.ext[:0]
	return st
}
