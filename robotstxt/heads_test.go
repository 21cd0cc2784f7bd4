package robotstxt

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestPrefixSetDeepest checks deepest against a search of every key, on
// keys around the 8 octets that first8 compares at once: shorter and
// longer ones, ones that differ only past those 8, and ones with NUL
// octets.
func TestPrefixSetDeepest(t *testing.T) {
	keys := []string{"", "/", "/a", "/ab", "/abcdefg", "/abcdefgh", "/abcdefghij", "/abcdefgz", "/abcdefz",
		"/b", "/b\x00", "/b\x00c", "/b\x00\x00\x00\x00\x00\x00\x00", "/zzzzzzzzzz", "a"}
	slices.Sort(keys)
	p := newPrefixSet(keys)
	want := func(s string) int32 {
		best := int32(-1)
		for i, k := range keys {
			if strings.HasPrefix(s, k) && (best < 0 || len(k) > len(keys[best])) {
				best = int32(i)
			}
		}
		return best
	}
	paths := slices.Clone(keys)
	for _, k := range keys {
		paths = append(paths, k+"x", k+"\x00", k+"zzzzzzzz")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const octets = "/abcdefghz\x00"
	for range 20000 {
		b := make([]byte, rng.IntN(13))
		for i := range b {
			b[i] = octets[rng.IntN(len(octets))]
		}
		paths = append(paths, string(b))
	}
	for _, s := range paths {
		if got, w := p.deepest(s), want(s); got != w {
			t.Fatalf("deepest(%q) = %d; want %d (%q)", s, got, w, keys[max(w, 0)])
		}
	}
}
