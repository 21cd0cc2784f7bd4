package robotstxt

import (
	"cmp"
	"errors"
	"iter"
	"slices"
	"strings"
)

// A Category is a category of use of content, as a statement of usage
// preferences names it: [TrainAI], [Search], [AIInput], or any other
// label, which is kept as written. Labels are compared as written, case
// included (draft-ietf-aipref-vocab-07 §6.1).
type Category string

// The categories of use that both vocabularies read. Each has its
// Content-Usage label (draft-ietf-aipref-vocab-07 §6.1) and its
// Content-Signal one (Cloudflare's Content Signals Policy).
const (
	// TrainAI is training or fine-tuning AI models: "train-ai" in
	// Content-Usage, "ai-train" in Content-Signal.
	TrainAI Category = "train-ai"
	// Search is building a search index and giving search results that
	// link to the content: "search" in both.
	Search Category = "search"
	// AIInput is using content as input to AI models as they answer
	// (retrieval-augmented generation, grounding): "ai-input" in
	// Content-Signal. The aipref vocabulary has no term for it yet; a
	// Content-Usage statement that writes "ai-input" is read as this
	// category, as any label is read as the category it names.
	AIInput Category = "ai-input"
)

// known are the categories a [Usage] holds in its array, in the order
// that [Usage.String] writes them.
var known = [...]Category{TrainAI, Search, AIInput}

// knownIndex returns c's index in known, or -1.
func knownIndex(c Category) int {
	switch c {
	case TrainAI:
		return 0
	case Search:
		return 1
	case AIInput:
		return 2
	}
	return -1
}

// A Preference is what a statement of preference says of one category of
// use: [Unknown], [Yes] or [No] (draft-ietf-aipref-vocab-07 §3).
type Preference int8

const (
	// Unknown: nothing is stated of the use, or what is stated is not y
	// or n. The zero Preference.
	Unknown Preference = iota
	// Yes: the use is allowed ("y" in Content-Usage, "yes" in
	// Content-Signal).
	Yes
	// No: the use is disallowed ("n" in Content-Usage, "no" in
	// Content-Signal).
	No
)

// String returns "y", "n" or "unknown".
func (p Preference) String() string {
	switch p {
	case Yes:
		return "y"
	case No:
		return "n"
	}
	return "unknown"
}

// Combine returns the preference of two statements about one use, as
// draft-ietf-aipref-vocab-07 §5.1 combines them: No if either is No;
// otherwise Yes if either is Yes; otherwise Unknown. The most restrictive
// wins.
func (p Preference) Combine(q Preference) Preference { return max(p, q) }

// A Usage is a statement of usage preferences: for each category of use,
// [Yes], [No] or [Unknown]. The zero Usage states nothing. A Usage is a
// small value, comparable with ==, and allocates nothing unless it holds
// categories other than TrainAI, Search and AIInput.
type Usage struct {
	known [len(known)]Preference
	// other holds the other categories stated Yes or No, as
	// "label=y, label=n", sorted by label; "" for none.
	other string
}

// Of returns the preference for category c.
func (u Usage) Of(c Category) Preference {
	if i := knownIndex(c); i >= 0 {
		return u.known[i]
	}
	for c2, p := range otherPrefs(u.other) {
		if c2 == c {
			return p
		}
	}
	return Unknown
}

// With returns u with the preference for c set to p; Unknown clears it.
// A label that a Dictionary could not hold as a key (one of a-z, 0-9,
// '_', '-', '.' and '*', starting with a-z or '*') leaves u as it is.
func (u Usage) With(c Category, p Preference) Usage {
	if i := knownIndex(c); i >= 0 {
		u.known[i] = p
		return u
	}
	if !isLabel(string(c)) {
		return u
	}
	prefs := collectOther(u.other, nil)
	prefs = slices.DeleteFunc(prefs, func(e categoryPref) bool { return e.c == c })
	if p != Unknown {
		prefs = append(prefs, categoryPref{c, p})
	}
	u.other = formatOther(prefs)
	return u
}

// Disallowed returns the uses among uses that u states [No] for, each
// No: what u keeps a crawler of those uses from. It is the zero Usage
// when u disallows none of them.
func (u Usage) Disallowed(uses ...Category) Usage {
	var d Usage
	for _, c := range uses {
		if u.Of(c) == No {
			d = d.With(c, No)
		}
	}
	return d
}

// Combine returns the preferences of u and v together, each category's
// combined by [Preference.Combine]: what the two statements say of a use,
// the most restrictive winning.
func (u Usage) Combine(v Usage) Usage {
	for i := range u.known {
		u.known[i] = u.known[i].Combine(v.known[i])
	}
	switch {
	case v.other == "" || u.other == v.other:
	case u.other == "":
		u.other = v.other
	default:
		a, b := collectOther(u.other, nil), collectOther(v.other, nil)
		prefs := make([]categoryPref, 0, len(a)+len(b))
		for len(a) > 0 && len(b) > 0 { // both sorted by label
			switch cmp.Compare(a[0].c, b[0].c) {
			case -1:
				prefs, a = append(prefs, a[0]), a[1:]
			case 1:
				prefs, b = append(prefs, b[0]), b[1:]
			default:
				prefs = append(prefs, categoryPref{a[0].c, a[0].p.Combine(b[0].p)})
				a, b = a[1:], b[1:]
			}
		}
		u.other = formatOther(append(append(prefs, a...), b...))
	}
	return u
}

// All returns the categories that u states Yes or No, with their
// preference: TrainAI, Search and AIInput first, then the others by label.
func (u Usage) All() iter.Seq2[Category, Preference] {
	return func(yield func(Category, Preference) bool) {
		for i, p := range u.known {
			if p != Unknown && !yield(known[i], p) {
				return
			}
		}
		for c, p := range otherPrefs(u.other) {
			if !yield(c, p) {
				return
			}
		}
	}
}

// String returns u as a Content-Usage dictionary, each category by its
// own label, as "train-ai=n, search=y"; "" when u states nothing.
func (u Usage) String() string {
	var b strings.Builder
	for i, p := range u.known {
		if p == Unknown {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(string(known[i]))
		b.WriteByte('=')
		b.WriteString(p.String())
	}
	if u.other != "" {
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(u.other)
	}
	return b.String()
}

// isLabel reports whether s is a Key of RFC 9651 §3.2.
func isLabel(s string) bool {
	if s == "" || !('a' <= s[0] && s[0] <= 'z' || s[0] == '*') {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isKeyByte(s[i]) {
			return false
		}
	}
	return true
}

// categoryPref is one category and its preference.
type categoryPref struct {
	c Category
	p Preference
}

// otherPrefs iterates over the entries of a Usage's other.
func otherPrefs(other string) iter.Seq2[Category, Preference] {
	return func(yield func(Category, Preference) bool) {
		for entry := range strings.SplitSeq(other, ", ") {
			if entry == "" {
				continue
			}
			label := entry[:len(entry)-2] // "label=y"
			p := Yes
			if entry[len(entry)-1] == 'n' {
				p = No
			}
			if !yield(Category(label), p) {
				return
			}
		}
	}
}

// collectOther appends the entries of other to prefs.
func collectOther(other string, prefs []categoryPref) []categoryPref {
	for c, p := range otherPrefs(other) {
		prefs = append(prefs, categoryPref{c, p})
	}
	return prefs
}

// formatOther writes prefs, which name each category once, as a Usage's
// other: sorted by label, Unknown ones left out.
func formatOther(prefs []categoryPref) string {
	slices.SortFunc(prefs, func(a, b categoryPref) int { return cmp.Compare(a.c, b.c) })
	var b strings.Builder
	for _, e := range prefs {
		if e.p == Unknown {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(string(e.c))
		b.WriteByte('=')
		b.WriteString(e.p.String())
	}
	return b.String()
}

// ErrBadUsage is matched by the error of a statement of preference that
// does not parse: [ParseContentUsage] and [ParseContentSignal] return one,
// and [File.Skipped] lists a robots.txt line that writes one.
var ErrBadUsage = errors.New("robotstxt: statement of usage preferences is not a structured-field dictionary")

// A UsageError says why a statement of usage preferences did not parse. It
// matches [ErrBadUsage] with [errors.Is].
type UsageError struct {
	// Field is the field or rule that wrote the statement:
	// "Content-Usage" or "Content-Signal".
	Field string
	// Offset is the octet of the statement where parsing failed.
	Offset int
	// Reason says what was wrong, as "a key must start with a-z or '*'".
	Reason string
}

// Error implements the error interface.
func (e *UsageError) Error() string {
	return "robotstxt: " + e.Field + ": not a structured-field dictionary: " + e.Reason
}

// Is reports whether target is [ErrBadUsage].
func (e *UsageError) Is(target error) bool { return target == ErrBadUsage }

// A vocabulary reads the labels and values of one signal.
type vocabulary struct {
	field string
	// category maps a label to its category; any other label is the
	// category it names.
	category func(label string) Category
	yes, no  string // the Tokens that say Yes and No
}

var (
	// contentUsage is the vocabulary of draft-ietf-aipref-vocab-07.
	contentUsage = vocabulary{field: "Content-Usage", category: func(l string) Category { return Category(l) }, yes: "y", no: "n"}
	// contentSignal is the vocabulary of Cloudflare's Content Signals
	// Policy: "ai-train" is TrainAI.
	contentSignal = vocabulary{field: "Content-Signal", category: func(l string) Category {
		if l == "ai-train" {
			return TrainAI
		}
		return Category(l)
	}, yes: "yes", no: "no"}
)

// ParseContentUsage reads a statement of usage preferences in the format of
// draft-ietf-aipref-vocab-07 §6: the value of a Content-Usage response
// field (draft-ietf-aipref-attach-05 §2), or of a robots.txt Content-Usage
// rule once its path is taken off. It is an RFC 9651 Dictionary whose
// keys are labels of categories and whose values are the Tokens y and n.
// A value of another type or Token, or a key without one, leaves its
// category Unknown; parameters are ignored; of a key given twice, the last
// counts (§6.5.1). Labels other than "train-ai" and "search" are kept as
// the categories they name.
//
// A response's field lines are joined with ", " before they are parsed
// (RFC 9651 §4.2). When s is not a Dictionary, ParseContentUsage returns
// the zero Usage, every preference unknown, as §6.5.1 says, and a
// [*UsageError].
func ParseContentUsage(s string) (Usage, error) { return contentUsage.parse(s) }

// ParseContentSignal reads a Content-Signal line of Cloudflare's Content
// Signals Policy, as robots.txt writes it ("search=yes, ai-train=no") and
// some responses send it as a field: the same Dictionary as
// [ParseContentUsage]'s, read in that policy's vocabulary. "ai-train" is
// [TrainAI], "search" [Search] and "ai-input" [AIInput]; the Tokens yes and
// no are [Yes] and [No]; a use left out states no preference. Other labels
// are kept as the categories they name.
func ParseContentSignal(s string) (Usage, error) { return contentSignal.parse(s) }

// parse reads s in the vocabulary v.
func (v *vocabulary) parse(s string) (Usage, error) {
	var u Usage
	var others []categoryPref // categories beyond known, in order, Unknown ones too: the last of a label counts
	err := parseDictionary(s, func(m sfMember) {
		p := Unknown
		switch m.token {
		case v.yes:
			p = Yes
		case v.no:
			p = No
		}
		c := v.category(m.key)
		if i := knownIndex(c); i >= 0 {
			u.known[i] = p
			return
		}
		others = append(others, categoryPref{c, p})
	})
	if err != nil {
		var e *sfError
		errors.As(err, &e)
		return Usage{}, &UsageError{Field: v.field, Offset: e.at, Reason: e.why}
	}
	if len(others) > 0 {
		// The last of each label counts: a stable sort keeps a label's
		// entries in order, and compacting from the end keeps the last.
		slices.SortStableFunc(others, func(a, b categoryPref) int { return cmp.Compare(a.c, b.c) })
		slices.Reverse(others)
		others = slices.CompactFunc(others, func(a, b categoryPref) bool { return a.c == b.c })
		u.other = formatOther(others)
	}
	return u, nil
}
