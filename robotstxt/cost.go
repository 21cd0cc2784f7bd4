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
// of 8 KiB. n/4+16 more covers both, and allocSize(a+b) is at most
// allocSize(a)+allocSize(b), so that a bound may count the parts of what
// is allocated whole.
func allocSize(n int) int64 { return int64(n + n/4 + 16) }

// The sizes of the types that a File keeps.
const (
	sizeFile       = int(unsafe.Sizeof(File{}))
	sizeRobotsFile = int(unsafe.Sizeof(robotsFile{}))
	sizeGroup      = int(unsafe.Sizeof(robotsGroup{}))
	sizeRule       = int(unsafe.Sizeof(fileRule{}))
	sizeAgent      = int(unsafe.Sizeof(agentLine{}))
	sizeUsageRule  = int(unsafe.Sizeof(UsageRule{}))
	sizeString     = int(unsafe.Sizeof(""))
	sizeSkipped    = int(unsafe.Sizeof(SkippedLine{}))
	sizeBinding    = int(unsafe.Sizeof(Group{}))
	sizeToken      = int(unsafe.Sizeof(tokenBinding{}))
	sizePart       = int(unsafe.Sizeof(groupPart{}))
	sizeMatcher    = int(unsafe.Sizeof(ruleMatcher{}))
	sizeWild       = int(unsafe.Sizeof(wildRule{}))
	sizeRef        = int(unsafe.Sizeof(ruleRef{}))
	sizeNode       = int(unsafe.Sizeof(acNode{}))
	// A map keeps at most this many bytes an entry, besides its keys'
	// text, and mapBase for a map of eight entries or fewer: Go's maps
	// hold entries in groups of eight slots, at most seven eighths full,
	// and double when they grow (a map[string]*T of 500 to 4,000 entries
	// measures 55 bytes an entry).
	mapEntry = 80
	mapBase  = 512
)

// fileCost returns the bound that Cost returns for f, whose text is
// the copy of the body, and whose groups' names and rules take their
// parts of arrays of agentsCap and rulesCap; copied is the bytes of the
// patterns that normalisation wrote anew.
func fileCost(f *robotsFile, text string, agentsCap, rulesCap int, copied int64) int64 {
	c := allocSize(sizeFile) + allocSize(sizeRobotsFile) + allocSize(len(text)) + copied +
		allocSize(cap(f.groups)*sizeGroup) + allocSize(agentsCap*sizeAgent) + allocSize(rulesCap*sizeRule) +
		allocSize(cap(f.sitemaps)*sizeString) + allocSize(cap(f.skippedLines)*sizeSkipped)
	for _, s := range f.skippedLines {
		c += allocSize(len(s.Text))
	}
	for i := range f.groups {
		if u := cap(f.groups[i].usage); u > 0 {
			c += allocSize(u * sizeUsageRule)
		}
	}
	// Bindings: one for each name and for "*" and no group, each with its
	// parts, at most one for each name of a group naming its token; the
	// last one asked for; the map of them, and of the compiled parts; the
	// set of names, lower-cased.
	names := 0
	for i := range f.groups {
		for _, a := range f.groups[i].agents {
			names++
			c += allocSize(len(a.name)) + mapEntry
		}
	}
	c += int64(names+2)*(allocSize(sizeBinding)+mapEntry+allocSize(2*8)) + 3*mapBase + allocSize(sizeToken)
	for i := range f.groups {
		g := &f.groups[i]
		if len(g.agents) > 0 {
			c += groupCost(g)
		}
	}
	return c
}

// groupCost returns a bound of what compiling g keeps, as a part of its
// own or of the part of the groups that give its names: the key of the
// part, its rules gathered, the part and its matcher.
func groupCost(g *robotsGroup) int64 {
	key := len(g.agents)
	for _, a := range g.agents {
		key += len(a.name)
	}
	c := allocSize(key) + mapEntry + allocSize(sizePart) + allocSize(2*len(g.rules)*sizeRule)
	if len(g.usage) > 0 {
		c += allocSize(2 * len(g.usage) * sizeUsageRule) // gathered with the groups that give its names
	}
	if g.tooComplex() {
		return c // any Group it is part of decides no path, and compiles nothing (Group.Err)
	}
	return c + matcherCost(g.rules)
}

// matcherCost returns a bound of what compileRules(rules) keeps: the
// matcher, for each head its key, parent and two best rules; and for the
// patterns with a '*', each one's wildRule, its pieces, the literals with their keys and best rank, and the
// automaton, a node for each octet of the literals, which follow the head.
// A pattern with a '$' that is not its last octet keeps two copies of its
// body, with each '$' written "%24".
func matcherCost(rules []fileRule) int64 {
	n, wild, pieces, litOctets, copies := len(rules), 0, 0, 0, int64(0)
	for _, r := range rules {
		size := len(r.pattern)
		if strings.IndexByte(strings.TrimSuffix(r.pattern, "$"), '$') >= 0 {
			size *= 3
			copies += 2 * allocSize(size)
		}
		if stars := strings.Count(r.pattern, "*"); stars > 0 {
			wild++
			pieces += stars
			litOctets += size - strings.IndexByte(r.pattern, '*') - stars // after the head
		}
	}
	c := allocSize(sizeMatcher) + allocSize(n*sizeString) + allocSize(4*n) + allocSize(2*n*sizeRef) + copies
	if wild > 0 {
		lits := pieces + wild
		c += allocSize(wild*sizeWild) + allocSize(4*pieces) + allocSize(lits*sizeString) +
			allocSize(4*(n+lits+1)) + allocSize(4*lits) + allocSize(512) + allocSize((litOctets+2)*sizeNode)
		c += allocSize(4 * lits) // each literal's next on its chain (ruleMatcher.suffixes)
	}
	return c
}
