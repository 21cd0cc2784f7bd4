package audit

import (
	"strings"
	"testing"

	"github.com/polite-go/polite/robotstxt"
)

// TestDecisionCache checks that the cache gives each group its own
// decisions, the same as the engine's, for paths it keeps and for those
// too long to keep.
func TestDecisionCache(t *testing.T) {
	f := robotstxt.Parse([]byte("User-agent: a\nDisallow: /x\n\nUser-agent: b\nAllow: /x\nDisallow: /\n"))
	groups := []*robotstxt.Group{f.Group("a"), f.Group("b")}
	long := "/x" + strings.Repeat("y", maxCachedPath)
	paths := []string{"/x", "/y", "/x?q", "/%78", long, "/x", "/y", long}
	c := newDecisionCache()
	for round := range 3 {
		for _, p := range paths {
			for i, g := range groups {
				allowed, rule := c.decide(uint32(i+1), g, []byte(p))
				wantAllowed, wantRule, _ := g.Decide(p)
				if allowed != wantAllowed || rule != wantRule {
					t.Errorf("round %d: group %s, %.20q: %v %q; want %v %q", round, g.Agent(), p, allowed, rule, wantAllowed, wantRule)
				}
			}
		}
	}
}

// TestDecisionCacheUndecided checks that a path the engine does not decide,
// longer than robotstxt.MaxPathLength, counts as allowed.
func TestDecisionCacheUndecided(t *testing.T) {
	g := robotstxt.Parse([]byte("User-agent: *\nDisallow: /\n")).Group("*")
	long := "/" + strings.Repeat("x", robotstxt.MaxPathLength)
	if allowed, rule := newDecisionCache().decide(1, g, []byte(long)); !allowed || rule != (robotstxt.Rule{}) {
		t.Errorf("a path past MaxPathLength: %v %q; want allowed, no rule", allowed, rule)
	}
}

func TestDecisionCacheAllocs(t *testing.T) {
	g := robotstxt.Parse([]byte("User-agent: *\nDisallow: /x\n")).Group("*")
	c := newDecisionCache()
	path := []byte("/x/y?z")
	c.decide(1, g, path)
	if n := testing.AllocsPerRun(100, func() { c.decide(1, g, path) }); n != 0 {
		t.Errorf("a cached decision allocates %v times; want 0", n)
	}
}
