package robotstxt

import (
	"cmp"
	"slices"
	"strings"
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
// the pieces and tails that occur, where each first ends, and which of the
// path's blocks, 64 at most, each ends in (scan). Then only the patterns
// filed under a head that begins the path or under a literal that occurs
// are tried, best first, and a list stops at its first match or at a
// pattern that could not beat the best match so far. A try checks the
// length of the path, the head and the tail, and that the last piece ends
// in a block at or after the first piece's first; then it places the
// pieces in turn (wildMatches). A piece whose first occurrence is after
// the place, or that occurs at the place, is placed at once; another is
// found by searching the rest of the place's block, and if it is not
// there, the next block it ends in, from that block's start (next). Once
// a literal of at most 64 octets has been searched for as many octets as
// the blocks it ends in hold, but two, those blocks are searched once for
// its every end, kept as a bitmap of the path, and its later placements
// are looked up there (findEnds, nextEnd); a literal looked up there as
// many times as the path has octets gets a table of its next end at each
// octet, where a lookup is one load (tabulate).
//
// # Cost
//
// The compiled form shares the rules' text and adds 40 bytes a distinct
// head, 28 bytes a pattern with a '*' and 4 bytes a piece, 4 bytes and its
// octets a distinct piece or tail of at most maxShort octets and 20 bytes
// a longer one (litSet), and 4 bytes a literal that patterns are filed
// under. More than manyGrams literals of one and two octets are found by
// their octets' bits (grams.go), 4 bytes each; more than manyWords of 3
// to maxWord octets that begin with a pair of octets whose literals are
// all such, at most fewWords of each triple, by their pairs (words.go), 5
// bytes a pair, 1 a literal and 32 a first octet of more than wideKids
// pairs; the others, when there are more than fewLits literals, which
// scan otherwise finds by searching the path, by an automaton
// (ahocorasick.go) of 8 bytes a node, 4 more a node where a literal ends, and 8 more where a suffix of it does too or 4 a
// literal when most do, at most a node an octet of those literals but of
// the tails that it cuts, 5 bytes a literal it cuts and 256 bytes for its
// root. That is linear in the rules: for the 500 KiB files of
// engine_bench_test.go, 1.1 times the bytes of the rules' lines for plain
// rules, 2.7 for distinct "/*x<N>*y$" rules and 1.9 for rules of random
// 12-octet pieces (TestRuleMatcherSize).
// A decision also borrows scratch space, 48 bytes a literal, the bitmaps
// of ends, n/64+1 words a literal and 512 KiB at most, and the tables of
// next ends, 2n bytes a literal and 64 KiB at most, from a sync.Pool.
//
// A decision allocates nothing and gives nothing up. For a path of n
// octets and h distinct heads it costs O(n log h) to find the heads; at
// most 2n steps of the automaton, a step an octet where a literal ends to
// record, and a comparison of the tails of at most cutGroup literals that
// it cuts, of 4 octets and seldom up to 32, an octet at most; for grams
// two lookups an octet, and for words a search of the pairs of a first
// octet and of the third octets of a pair's literals, and a comparison of
// at most fewWords literals of at most maxWord octets, an octet; then a step
// for each literal that occurs, and past that at most one for each
// literal and block it ends in, 64 a literal, to hand the records down
// the chains (spread). Then each pattern tried is tried once, and places
// at most one piece a piece it has and an octet of the path; a placement
// costs a few comparisons, a lookup in a table or a bitmap, or a search
// of at most two blocks of max(64, n/64) octets, and the searches for a
// literal of at most 64 octets cost at most twice the octets of its
// blocks, and two blocks more, before its ends are found, which costs
// those octets once more. So a decision costs O(n + L + F + S) for L
// distinct literals and F octets of patterns, where S, the octets
// searched, is at most 5n a literal of at most 64 octets, and a piece's
// octets and two blocks a longer piece placed. BenchmarkEngineWorst times
// the worst files found, with paths of 2, 16 and 32 KiB.
type ruleMatcher struct {
	rules []fileRule // the rules given to compileRules, which match names by index
	heads prefixSet  // the distinct heads
	plain []ruleRef  // per head: the best pattern with this head, no '*' and no final '$'
	exact []ruleRef  // per head: the best pattern with this head, no '*' and a final '$'
	// The patterns with a '*', filed by key: those under head h are
	// wild[headKeys[h]:headKeys[h+1]], those under the kth literal that
	// keys any, l, wild[litKeys[k]:litKeys[k+1]], best first, where k is
	// l's rank in keyed (keyOf). Few literals key patterns:
	// most are only pieces of patterns filed under others.
	wild     []wildRule
	headKeys []int32
	litKeys  []int32
	keyed    bitRank    // the literals that key patterns
	pieces   []int32    // the pieces of wild, as literal indexes, rule after rule
	lits     litSet     // the distinct pieces and tails, sorted
	ac       *automaton // nil for fewLits literals or fewer, which scan finds by searching, or for those of grams and words alone
	grams    *grams     // the literals of one and two octets, when there are more than manyGrams; else nil
	words    *words     // the short literals of pairs that few begin with, when there are more than manyWords; else nil
	maxWild  ruleRef    // the best of wild, whether or not it matches; none if empty
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

// wildRule is a pattern with a '*'. Its pieces are pieces[from:to], in
// order.
type wildRule struct {
	ruleRef
	head   int32 // index into heads
	from   int32
	to     int32
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
	m := &ruleMatcher{rules: rules, maxWild: noRule}

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
	var wild []wildRule // from and to index pieces, for now
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
			w.to = int32(len(pieces))
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
	lits := make([]string, 0, distinct)
	for i, u := range uses {
		if i == 0 || u.lit != uses[i-1].lit {
			lits = append(lits, u.lit)
		}
		l := int32(len(lits) - 1)
		if u.at >= 0 {
			pieces[u.at] = l
		} else {
			wild[-1-u.at].tail = l
		}
	}
	m.fileWild(wild, pieces, lits)
	short := 0 // literals of one and two octets
	for _, l := range lits {
		if len(l) <= 2 {
			short++
		}
	}
	rest, skip := len(lits), 0 // the literals left to the automaton, and its skip
	if short > manyGrams {
		m.grams = newGrams(lits)
		rest, skip = rest-short, 2
	}
	var word []bool
	if len(lits) > fewLits {
		var n int
		if word, n = pairWords(lits); n > manyWords {
			m.words = newWords(lits, word)
			rest -= n
		} else {
			word = nil
		}
	}
	if rest > 0 && (rest < len(lits) || len(lits) > fewLits) {
		m.ac = newAutomaton(lits, skip, word)
	}
	m.lits = newLitSet(lits)
	return m
}

// keys reports whether literal l keys patterns.
func (m *ruleMatcher) keys(l int32) bool { return m.keyed.has(l) }

// keyOf returns the index in litKeys of literal l, which keys patterns.
func (m *ruleMatcher) keyOf(l int32) int32 {
	return m.keyed.rank(l)
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
func (m *ruleMatcher) fileWild(wild []wildRule, pieces []int32, lits []string) {
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
	count := make([]int32, int(nh)+len(lits)) // patterns filed under each key: heads, then literals
	keyOf := make([]int32, len(wild))
	for _, i := range best {
		w := &wild[i]
		key, size := w.head, len(m.heads.keys[w.head])
		consider := func(l int32) {
			k := nh + l
			if count[k] < count[key] || count[k] == count[key] && len(lits[l]) > size {
				key, size = k, len(lits[l])
			}
		}
		for _, l := range pieces[w.from:w.to] {
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
	m.headKeys = slices.Clone(starts[:nh+1])
	m.keyed = newBitRank(len(lits))
	keyed := 0
	for l := range int32(len(lits)) {
		if count[nh+l] > 0 {
			m.keyed.add(l)
			keyed++
		}
	}
	m.keyed.count()
	m.litKeys = make([]int32, 1, keyed+1)
	m.litKeys[0] = starts[nh]
	for l := range int32(len(lits)) {
		if m.keys(l) {
			m.litKeys = append(m.litKeys, starts[nh+l+1])
		}
	}
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
		seq := pieces[w.from:w.to]
		w.from = int32(len(m.pieces))
		m.pieces = append(m.pieces, seq...)
		w.to = int32(len(m.pieces))
		m.wild[j] = w
	}
}
