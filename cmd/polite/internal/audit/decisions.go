package audit

import (
	"hash/maphash"

	"github.com/polite-go/polite/robotstxt"
)

// decisionSlots is the size of the decision cache, a power of two, and
// maxCachedPath the longest path it keeps: at most 20 MB with the slots.
const (
	decisionSlots = 1 << 16
	maxCachedPath = 256
)

// A decisionCache remembers the engine's decisions by group and path, in a
// fixed number of slots: a path's slot is its hash's, and a new decision
// evicts the one there. Logs ask the same paths again and again, and a
// hit costs a hash and a comparison, with no allocation.
type decisionCache struct {
	seed  maphash.Seed
	slots []decisionSlot
}

type decisionSlot struct {
	group   uint32 // the group's number, from 1; 0 for an empty slot
	path    string
	allowed bool
	rule    robotstxt.Rule
}

func newDecisionCache() *decisionCache {
	return &decisionCache{seed: maphash.MakeSeed(), slots: make([]decisionSlot, decisionSlots)}
}

// decide returns g's decision on path; id is g's number, from 1, which
// tells its decisions apart from other groups'. A path that the engine
// does not decide (longer than robotstxt.MaxPathLength, or past its work
// budget) counts as allowed: no rule is known to refuse it.
func (c *decisionCache) decide(id uint32, g *robotstxt.Group, path []byte) (bool, robotstxt.Rule) {
	if len(path) > maxCachedPath {
		return decideOrAllow(g, string(path))
	}
	h := maphash.Bytes(c.seed, path) + uint64(id)*0x9E3779B97F4A7C15
	s := &c.slots[h&(decisionSlots-1)]
	if s.group == id && s.path == string(path) {
		return s.allowed, s.rule
	}
	p := string(path)
	allowed, rule := decideOrAllow(g, p)
	*s = decisionSlot{group: id, path: p, allowed: allowed, rule: rule}
	return allowed, rule
}

// decideOrAllow returns g's decision on path, allowed when g does not decide it.
func decideOrAllow(g *robotstxt.Group, path string) (bool, robotstxt.Rule) {
	allowed, rule, err := g.Decide(path)
	if err != nil {
		return true, robotstxt.Rule{}
	}
	return allowed, rule
}
