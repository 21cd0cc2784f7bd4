package robotstxt

import (
	"strings"
	"unsafe"
)

// Cost returns an upper bound of the bytes of heap that the File keeps:
// parsed, with every group compiled and every product token it names
// bound, as many decisions on it come to. It is known when the file is
// parsed, before anything is compiled, so that a cache can count it then;
// package polite's robots cache counts a file by it. It grows with the
// rules, their octets and their '*'s, not with the comments and other
// lines of the file, but for the copy of the body that Parse keeps.
//
// The bound is what the code allocates, by the sizes of its types, each
// object rounded up as Go's allocator rounds it, or more; the test of it
// measures the heap that files keep, real and adversarial ones, and
// FuzzCost any file.
func (r *File) Cost() int64 { return r.file.cost }

// allocSize returns at least the bytes that Go's allocator takes for an
// object of n bytes. Its size classes round a small object up by less
// than half, 33 bytes to 48 at worst; one past 32 KiB takes whole pages
// of 8 KiB. n/4+16 more covers the first, 8 KiB more the second, and
// allocSize(a+b) is at most allocSize(a)+allocSize(b), so that a bound may
// count the parts of what is allocated whole.
func allocSize(n int) int64 {
	if n > 32<<10 {
		return int64(n + 8<<10)
	}
	return int64(n + n/4 + 16)
}

// The sizes of the types that a File keeps.
const (
	sizeFile      = int(unsafe.Sizeof(File{}))
	sizeGroup     = int(unsafe.Sizeof(robotsGroup{}))
	sizeRule      = int(unsafe.Sizeof(fileRule{}))
	sizeAgent     = int(unsafe.Sizeof(agentLine{}))
	sizeUsageRule = int(unsafe.Sizeof(UsageRule{}))
	sizeString    = int(unsafe.Sizeof(""))
	sizeSlice     = int(unsafe.Sizeof([]byte(nil)))
	sizeSkipped   = int(unsafe.Sizeof(SkippedLine{}))
	sizeBinding   = int(unsafe.Sizeof(Group{}))
	sizeToken     = int(unsafe.Sizeof(tokenBinding{}))
	sizePart      = int(unsafe.Sizeof(groupPart{}))
	sizeCompiling = int(unsafe.Sizeof(partCompiling{}))
	sizeMatcher   = int(unsafe.Sizeof(ruleMatcher{}))
	sizeWild      = int(unsafe.Sizeof(wildRule{}))
	sizeRef       = int(unsafe.Sizeof(ruleRef{}))
	sizeNode      = int(unsafe.Sizeof(acNode{}))
	sizeLink      = int(unsafe.Sizeof(acLink{}))
	sizeGrams     = int(unsafe.Sizeof(grams{}))
	sizeWords     = int(unsafe.Sizeof(words{}))
	sizeAutomaton = int(unsafe.Sizeof(automaton{}))
	sizeRare      = int(unsafe.Sizeof(acRare{}))
	sizeRankWord  = int(unsafe.Sizeof(rankWord{}))
)

// fileCost returns the bound that Cost returns for f, whose text is
// the copy of the body; copied is the bytes of the patterns that
// normalisation wrote anew.
func fileCost(f *robotsFile, text string, copied int64) int64 {
	c := parsedSize(f, text, copied, allocSize)
	// Bindings: one for each name and for "*" and no group, each with its
	// group token, lower-cased, and its parts, at most one for each name
	// of a group naming its token; the last one asked for; the array of
	// them, and of the parts by group; the array of names.
	names := len(f.agents)
	for _, a := range f.agents {
		c += allocSize(len(a.name))
	}
	c += int64(names+2)*(allocSize(sizeBinding)+allocSize(2*8)) + allocSize((names+2)*8) + allocSize(sizeToken) +
		allocSize(len(f.groups)*8) + allocSize(names*4)
	for i := range f.groups {
		if len(f.agentsOf(i)) > 0 {
			c += groupCost(f.rulesOf(i), f.usageOf(i))
		}
	}
	return c
}

// parsedSize returns what parsing keeps in f, whose text is the copy of
// the body, each object counted by size: the File, the text, its arrays and
// the text of its skipped lines, and copied, the bytes of the patterns
// that normalisation wrote anew, as size counts them.
func parsedSize(f *robotsFile, text string, copied int64, size func(int) int64) int64 {
	c := size(sizeFile) + size(len(text)) + copied +
		size(cap(f.groups)*sizeGroup) + size(cap(f.agents)*sizeAgent) + size(cap(f.rules)*sizeRule) +
		size(cap(f.usage)*sizeUsageRule) + size(cap(f.sitemaps)*sizeString) + size(cap(f.skippedLines)*sizeSkipped)
	for _, s := range f.skippedLines {
		c += size(len(s.Text))
	}
	return c
}

// groupCost returns a bound of what compiling a group of rules and usage
// keeps, as a part of its own or of the part of the groups that give its
// names: its rules gathered, the part, what it keeps to compile, and its
// matcher.
func groupCost(rules []fileRule, usage []UsageRule) int64 {
	c := allocSize(sizePart) + allocSize(sizeCompiling) + allocSize(2*len(rules)*sizeRule)
	if len(usage) > 0 {
		c += allocSize(sizeSlice) + allocSize(2*len(usage)*sizeUsageRule) // gathered with the groups that give its names
	}
	if wildOctets(rules) > maxWildOctets {
		return c // any Group it is part of decides no path, and compiles nothing (Group.Err)
	}
	return c + matcherCost(rules)
}

// matcherCost returns a bound of what compileRules(rules) keeps: the
// matcher, for each head its key, parent and two best rules; and for the
// patterns with a '*', each one's wildRule, its pieces, the literals with
// their keys and best rank; for more than fewLits literals the automaton
// (automatonCost); and for more than manyWords of 3 octets or more, words
// (wordsCost). A pattern with a '$' that is not its last octet keeps two
// copies of its body, with each such '$' written "%24".
func matcherCost(rules []fileRule) int64 {
	n, wild, pieces := len(rules), 0, 0
	var copies int64
	var lits litBound
	for _, r := range rules {
		body, anchored := strings.CutSuffix(r.pattern, "$")
		if inner := strings.Count(body, "$"); inner > 0 {
			copies += 2 * allocSize(len(body)+2*inner)
		}
		star := strings.IndexByte(body, '*')
		if star < 0 {
			continue
		}
		wild++
		for rest, more := body[star+1:], true; more; {
			var piece string
			piece, rest, more = strings.Cut(rest, "*")
			if piece == "" {
				continue
			}
			if more || !anchored {
				pieces++
			}
			lits.add(piece)
		}
	}
	c := allocSize(sizeMatcher) + allocSize(n*sizeString) + allocSize(4*n) + allocSize(2*n*sizeRef) + copies
	if wild > 0 {
		l := lits.distinct()
		c += allocSize(wild*sizeWild) + allocSize(4*pieces) + allocSize(4*(n+1)) +
			allocSize(4*(min(l, wild)+1)) + allocSize(8*((l+63)/64)) + allocSize(4*((l+63)/64)) + // the keys
			allocSize(4*l) + allocSize(lits.shortOctets()) + allocSize(int(lits.long)*sizeString) // the litSet
		if short := min(lits.ones, 256) + min(lits.twos, 1<<16); short > manyGrams {
			c += allocSize(sizeGrams) + allocSize(32*256) + allocSize(4*256) + allocSize(4*int(short)) // grams, a first octet at most 256
		}
		if l > fewLits {
			c += automatonCost(lits.nodes(), int64(l))
		}
		if lits.longer > manyWords {
			c += wordsCost(lits.longer, l)
		}
	}
	return c
}

// automatonCost returns what newAutomaton keeps for lits literals whose
// prefixes are at most nodes nodes, the root too: a node, an entry of
// outLit and of links for each, and one more; two bits and two counts for
// each 64, three times; 32 bytes for each node of more than wideKids
// children; the root's table; and 9 bytes a literal, for the cut ones and
// for suffixes.
func automatonCost(nodes, lits int64) int64 {
	words := int((nodes + 64) / 64)
	return allocSize(sizeAutomaton) + allocSize(sizeRare) + allocSize(256) + allocSize(int(nodes+1)*sizeNode) +
		allocSize(int(nodes+1)*4) + allocSize(int(nodes)*sizeLink) + 3*(allocSize(8*words)+allocSize(4*words)) +
		allocSize(32*int(nodes/(wideKids+1))) + 2*allocSize(4*int(lits)) + allocSize(int(lits))
}

// wordsCost returns what newWords keeps for at most longer literals of 3
// octets or more, of lits literals: 4 bytes a first octet, 256 at most,
// and one more; 5 bytes a pair, at most one a literal; a byte a literal;
// and 32 bytes a first octet of more than wideKids pairs.
func wordsCost(longer int64, lits int) int64 {
	return allocSize(sizeWords) + allocSize(4*int(min(longer, 256)+1)) + allocSize(4*int(longer)) + allocSize(int(longer)) +
		allocSize(lits) + allocSize(32*int(min(longer/(wideKids+1), 256)))
}

// litBound bounds the literals of patterns, pieces and tails, and the
// nodes of their automaton, one literal at a time, whether or not it is
// distinct from the others: of one octet there are at most 256, and of
// two 65,536.
type litBound struct {
	ones, twos int64 // literals of one and two octets
	longer     int64 // of more
	prefixes   int64 // a bound of the nodes of those longer ones
	grouped    int64 // another
	short      int64 // the octets of those longer ones of at most maxShort octets
	long       int64 // the literals of more than maxShort octets
}

func (b *litBound) add(lit string) {
	size := len(lit) + 2*strings.Count(lit, "$")
	switch size {
	case 1:
		b.ones++
	case 2:
		b.twos++
	default:
		b.longer++
		if size <= maxShort {
			b.short += int64(size)
		} else {
			b.long++
		}
		shared, grouped := b.prefixNodes(lit, size)
		b.prefixes += int64(shared)
		b.grouped += int64(grouped)
	}
}

// prefixNodes returns bounds of what a literal of size octets in normal
// form adds to the nodes of an automaton (newAutomaton), in two ways. Its
// nodes but those of literals cut at another: its node's octets, less
// half of those that it shares with others, s, since those are a node for
// two literals at least: max(minKept, size-maxCut) - s/2 when it is cut
// there, 1 + s/2 when it is cut at s+1 octets, and size - s/2 when it
// is not. Or its nodes but those shared with cutGroup others or more,
// counted a part for each: the first minKept-1, those before its last
// maxCut, its node and its cut node, and a (cutGroup+1)th of the others.
// A literal that shortPeriod tells is never cut adds its octets, as does
// one of minKept+1 octets, which a small automaton does not cut.
func (b *litBound) prefixNodes(lit string, size int) (shared, grouped int) {
	if size <= minKept+1 || size != len(lit) || shortPeriod(lit[:minKept]) {
		return size, size // not cut, or not told
	}
	return max(size-maxCut, minKept, size/2+1), min(size, minKept+1+max(0, size-maxCut-minKept)+size/(cutGroup+1))
}

// shortOctets returns a bound of the octets of litSet.short.
func (b *litBound) shortOctets() int {
	return int(min(b.ones, 256) + 2*min(b.twos, 1<<16) + b.short)
}

func (b *litBound) distinct() int { return int(min(b.ones, 256) + min(b.twos, 1<<16) + b.longer) }

// nodes returns a bound of the nodes of the literals' automaton, the root
// too.
func (b *litBound) nodes() int64 {
	return 1 + min(b.ones, 256) + min(2*b.twos, 256+1<<16) + min(b.prefixes, b.grouped)
}
