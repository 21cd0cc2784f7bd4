package robotstxt

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestPairWords checks which literals pairWords makes words: those of a
// pair whose literals of 3 octets or more have at most maxWord octets
// each and at most fewWords of each triple.
func TestPairWords(t *testing.T) {
	triple := func(prefix string, n int) []string { // n literals of 4 octets that begin with prefix
		var lits []string
		for i := range n {
			lits = append(lits, prefix+string(rune('a'+i)))
		}
		return lits
	}
	for _, tc := range []struct {
		name  string
		lits  []string
		words []string
	}{
		{"one of each pair", []string{"abc", "abd1", "bcd", "cde"}, []string{"abc", "abd1", "bcd", "cde"}},
		{"short literals are not", []string{"a", "ab", "abc", "b"}, []string{"abc"}},
		{"fewWords of a triple", triple("abc", fewWords), triple("abc", fewWords)},
		{"one more", append(triple("abc", fewWords+1), "abz"), nil},
		{"fewWords of each triple", append(triple("abc", fewWords), triple("abd", fewWords)...),
			append(triple("abc", fewWords), triple("abd", fewWords)...)},
		{"a pair with a long literal", []string{"abc", "abd" + strings.Repeat("x", maxWord-2), "bcd"}, []string{"bcd"}},
		{"maxWord octets", []string{"abc" + strings.Repeat("x", maxWord-3), "bcd"}, []string{"abc" + strings.Repeat("x", maxWord-3), "bcd"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lits := slices.Clone(tc.lits)
			slices.Sort(lits)
			word, n := pairWords(lits)
			var got []string
			for l, w := range word {
				if w {
					got = append(got, lits[l])
				}
			}
			want := slices.Clone(tc.words)
			slices.Sort(want)
			if !slices.Equal(got, want) || n != len(want) {
				t.Errorf("pairWords(%q) = %q, %d; want %q", lits, got, n, want)
			}
		})
	}
}

// TestWordsAgreeWithBruteForce decides files of many distinct pieces of 3
// octets or more, over small alphabets, which a matcher finds by their
// pairs of octets (words.go), alone or beside pieces of one and two octets
// (grams.go) and longer ones that the automaton finds, with paths of up
// to 340 octets and of up to 12 KiB, and with more than wideKids pairs of
// a first octet, and checks each decision against bruteDecide.
func TestWordsAgreeWithBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for _, tc := range []struct {
		name     string
		alphabet string
		shortest int // octets of a piece
		longest  int
		path     int // octets of a path, at most
		rules    int // at least
	}{
		{"words", "abcdefghijklmnop/", 3, 6, 340, 60},
		{"words of few pairs", "abc/", 3, 8, 340, 60},
		{"words and long pieces", "abcdefgh/", 3, 14, 340, 60},
		{"words, grams and long pieces", "abcdefgh/", 1, 14, 340, 60},
		{"long paths", "abcdefgh/", 3, 8, 12 << 10, 60},
		{"many pairs of a first octet", "abcdefghijklmnopqrst/", 3, 4, 340, 600},
	} {
		t.Run(tc.name, func(t *testing.T) {
			piece := func() string {
				b := make([]byte, tc.shortest+r.IntN(tc.longest-tc.shortest+1))
				for i := range b {
					b[i] = tc.alphabet[r.IntN(len(tc.alphabet))]
				}
				return string(b)
			}
			withWords, withAutomaton, withWide := 0, 0, 0
			for range 40 {
				rules := make([]fileRule, tc.rules+r.IntN(100))
				for i := range rules {
					var b strings.Builder
					b.WriteByte('/')
					for range 1 + r.IntN(4) {
						b.WriteString("*" + piece())
					}
					if r.IntN(4) == 0 {
						b.WriteByte('$')
					}
					rules[i] = fileRule{pattern: normalizePath(b.String()), line: int32(i + 2), allow: r.IntN(3) == 0}
				}
				m := compileRules(rules)
				if m.words != nil {
					withWords++
					if len(m.words.wide) > 0 {
						withWide++
					}
					if m.ac != nil {
						withAutomaton++
					}
				}
				for range 30 {
					var p strings.Builder
					for p.WriteByte('/'); p.Len() < 40+r.IntN(tc.path-40); {
						p.WriteString(piece())
					}
					checkDecision(t, rules, m, p.String())
				}
			}
			if withWords < 20 {
				t.Errorf("%d files of 40 found pieces by words; the cases do not exercise it", withWords)
			}
			if tc.rules > 100 && withWide < 20 {
				t.Errorf("%d files of 40 have a first octet of more than wideKids pairs; the cases do not exercise it", withWide)
			}
			if tc.longest > maxWord && withAutomaton < 10 {
				t.Errorf("%d files of 40 have an automaton beside words; the cases do not exercise both", withAutomaton)
			}
		})
	}
}
