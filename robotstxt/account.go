package robotstxt

import (
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// keepRatio and keepSlack bound the heap that a File keeps, however many
// of its groups are bound and compiled: keepRatio times the size of its
// file, and keepSlack bytes more, which a small file's File, groups and
// bindings take.
const (
	keepRatio = 8
	keepSlack = 4 << 10
)

// smallRules and smallOctets bound a small part: one of at most
// smallRules rules whose patterns hold at most smallOctets octets, which
// trying each rule in turn decides within a few milliseconds at worst
// (BenchmarkEngineTried), and which is compiled only while its File keeps
// no more than its bound with it.
const (
	smallRules  = 128
	smallOctets = 16 << 10
)

// What a File keeps is counted, each object's bytes as Go's allocator
// takes them (heapSize), against its bound: keepRatio times the size of
// its file and keepSlack more. File.left is what remains. Parse counts
// what it keeps and what the parts of the groups will once made
// (partsKept); then
//   - a binding, a Group and its place among the File's bindings, is kept
//     only when it fits in what remains; else it is made for each call
//     that asks for it, and decides as a kept one would;
//   - a small part is compiled only when its matcher fits in what
//     remains; else it decides by trying each rule in turn, as a tiny part
//     does (BenchmarkEngineTried times the worst rules it may have);
//   - a part that is not small is always compiled, and when it, or the
//     rules gathered for a part, take the File past its bound, the
//     matchers of small parts are let go, from the File's last group back,
//     until it is within it again or none is left.
//
// So a File keeps at most its bound, whatever is asked of it, but for
// what its parse and its large parts take alone, which the tests measure
// (cost_test.go), and a real file's groups are all bound and compiled
// within it.

// partsKept returns what the parts of f's groups keep once made, as
// heapSize counts them: the array of parts by group, and for each group
// that gives names a part, its state of compiling unless its rules are
// tiny, and the pointer to its usage lines. Parse counts them, so that
// the bindings kept before they are made leave room for them; a group
// that gives the names of one before it is counted, and takes nothing.
func partsKept(f *robotsFile) int64 {
	n := heapSize(len(f.groups) * 8)
	for i := range f.groups {
		if len(f.agentsOf(i)) == 0 {
			continue
		}
		n += heapSize(sizePart)
		if !isTiny(f.rulesOf(i)) {
			n += heapSize(sizeCompiling)
		}
		if len(f.usageOf(i)) > 0 {
			n += heapSize(sizeSlice)
		}
	}
	return n
}

// keep counts n bytes more that r keeps, and undoes the matchers of small
// parts while r keeps more than its bound. r.mu is held.
func (r *File) keep(n int64) {
	r.left -= n
	undone := false
	for i := len(r.classes) - 1; i >= 0 && r.left < 0; i-- {
		p := r.classes[i]
		if p == nil || p.tiny() || !p.compiling.small {
			continue
		}
		if m := p.compiling.matcher.Swap(nil); m != nil {
			r.left += m.heapBytes()
			undone = true
		}
	}
	if undone {
		r.forgetUndone()
	}
}

// admit keeps m, of n bytes, as the matcher of p, a small part, when r can
// keep it within its bound. r.mu is held.
func (r *File) admit(p *groupPart, m *ruleMatcher, n int64) {
	if n <= r.left {
		r.left -= n
		p.compiling.matcher.Store(m)
	}
}

// forgetUndone drops the matchers undone from the Groups of one part that
// hold them in single, so that the heap they take is freed.
func (r *File) forgetUndone() {
	bound := r.bound.Load()
	if bound == nil {
		return
	}
	for _, g := range *bound {
		if m := g.single.Load(); m != nil && g.parts[0].loaded() != m {
			g.single.CompareAndSwap(m, nil)
		}
	}
}

// heapSize returns the bytes that Go's allocator takes for an object of n
// bytes: n rounded up to its size class, or past the largest that
// runtime.MemStats lists, to whole pages of 8 KiB.
func heapSize(n int) int64 {
	c := sizeClasses()
	switch {
	case n <= 0:
		return 0
	case n <= len(c.small)*8:
		return int64(c.small[(n-1)/8])
	}
	if i, _ := slices.BinarySearch(c.sizes, uint32(min(n, math.MaxUint32))); i < len(c.sizes) {
		return int64(c.sizes[i])
	}
	return int64((n + 8<<10 - 1) &^ (8<<10 - 1))
}

// classes are the allocator's size classes: their sizes, from the
// smallest, and the class of each object of up to 1 KiB, by its size in
// words less one.
type classes struct {
	sizes []uint32
	small [128]uint16
}

// sizeClasses returns the allocator's size classes, as runtime.MemStats.BySize
// lists them: read once, since runtime.ReadMemStats stops the world.
var sizeClasses = sync.OnceValue(func() *classes {
	var s runtime.MemStats
	runtime.ReadMemStats(&s)
	c := new(classes)
	for _, b := range s.BySize {
		if b.Size > 0 {
			c.sizes = append(c.sizes, b.Size)
		}
	}
	k := 0
	for w := range c.small {
		for int(c.sizes[k]) < 8*(w+1) {
			k++
		}
		c.small[w] = uint16(c.sizes[k])
	}
	return c
})

// heapBytes returns the bytes of heap that m keeps, as heapSize counts
// them: compileRules's allocations that it holds, and for each pattern
// with a '$' that is not its last octet, two copies of its body with each
// such '$' written "%24", as matcherCost counts them. Its rules and the
// octets of its patterns are its part's and its file's.
func (m *ruleMatcher) heapBytes() int64 {
	n := heapSize(sizeMatcher) + heapSize(cap(m.heads.keys)*sizeString) + heapSize(cap(m.heads.parent)*4) +
		heapSize((cap(m.plain)+cap(m.exact))*sizeRef) + heapSize(cap(m.wild)*sizeWild) +
		heapSize(cap(m.headKeys)*4) + heapSize(cap(m.litKeys)*4) + heapSize(cap(m.keyed)*sizeRankWord) +
		heapSize(cap(m.pieces)*4) + heapSize(cap(m.lits.at)*4) + heapSize(len(m.lits.short)) +
		heapSize(cap(m.lits.long)*sizeString)
	for i := range m.rules {
		body, _ := strings.CutSuffix(m.rules[i].pattern, "$")
		if inner := strings.Count(body, "$"); inner > 0 {
			n += 2 * heapSize(len(body)+2*inner)
		}
	}
	if g := m.grams; g != nil {
		n += heapSize(sizeGrams) + heapSize(cap(g.seconds)*32) + heapSize(cap(g.base)*4) + heapSize(cap(g.lits)*4)
	}
	if w := m.words; w != nil {
		n += heapSize(sizeWords) + heapSize(cap(w.base)*4) + heapSize(cap(w.seconds)) + heapSize(cap(w.pairs)*4) + heapSize(cap(w.thirds)) + heapSize(cap(w.wide)*32)
	}
	if a := m.ac; a != nil {
		n += heapSize(sizeAutomaton) + heapSize(256) + heapSize(cap(a.nodes)*sizeNode) + heapSize(cap(a.outs)*sizeRankWord) +
			heapSize(cap(a.outLit)*4) + heapSize(cap(a.suffixes)*4) + heapSize(cap(a.linked)*sizeRankWord) +
			heapSize(cap(a.links)*sizeLink)
		if r := a.acRare; r != nil {
			n += heapSize(sizeRare) + heapSize(cap(r.cut)*sizeRankWord) + heapSize(cap(r.last4)*4) +
				heapSize(cap(r.cutTail)) + heapSize(cap(r.wided)*sizeRankWord) + heapSize(cap(r.wide)*32)
		}
	}
	return n
}
