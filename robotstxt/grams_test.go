package robotstxt

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestGramsAgreeWithBruteForce decides files of many distinct pieces of
// one and two octets, which a matcher finds by their octets (grams.go),
// alone or beside longer pieces that the automaton finds, and checks each
// decision against bruteDecide.
func TestGramsAgreeWithBruteForce(t *testing.T) {
	const alphabet = "abcdefghij/"
	r := rand.New(rand.NewPCG(7, 7))
	piece := func(max int) string { // of two octets at most, three times in four
		if r.IntN(4) > 0 {
			max = min(max, 2)
		}
		b := make([]byte, 1+r.IntN(max))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	for _, tc := range []struct {
		name    string
		longest int // octets of a piece
	}{
		{"short pieces", 2},
		{"short and long pieces", 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			withGrams, withAutomaton := 0, 0
			for range 60 {
				rules := make([]fileRule, 40+r.IntN(60))
				for i := range rules {
					var b strings.Builder
					b.WriteByte('/')
					for range 1 + r.IntN(5) {
						b.WriteString("*" + piece(tc.longest))
					}
					if r.IntN(4) == 0 {
						b.WriteByte('$')
					}
					rules[i] = fileRule{pattern: normalizePath(b.String()), line: int32(i + 2), allow: r.IntN(3) == 0}
				}
				m := compileRules(rules)
				if m.grams != nil {
					withGrams++
				}
				if m.ac != nil {
					withAutomaton++
				}
				for range 30 {
					var p strings.Builder
					for p.WriteByte('/'); p.Len() < 120; {
						p.WriteString(piece(tc.longest))
					}
					checkDecision(t, rules, m, p.String())
				}
			}
			if withGrams < 30 {
				t.Errorf("%d files of 60 found their short pieces by grams; the cases do not exercise it", withGrams)
			}
			if tc.longest > 2 && withAutomaton < 30 {
				t.Errorf("%d files of 60 have an automaton beside grams; the cases do not exercise both", withAutomaton)
			}
		})
	}
}
