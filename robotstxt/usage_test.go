package robotstxt

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/polite-go/polite/internal/robotstest"
)

// attachExample is the robots.txt of draft-ietf-aipref-attach-05 §3.4.
const attachExample = robotstest.AttachExample

// mustUsage parses a Content-Usage statement that the test knows is good.
func mustUsage(t *testing.T, s string) Usage {
	t.Helper()
	u, err := ParseContentUsage(s)
	if err != nil {
		t.Fatalf("ParseContentUsage(%q): %v", s, err)
	}
	return u
}

// TestAttachExample checks the table of draft-ietf-aipref-attach-05 §3.4:
// which paths may be crawled and the preference of each; and that a bot
// with its own group takes that group's preference.
func TestAttachExample(t *testing.T) {
	f := Parse([]byte(attachExample))
	if n := f.NumSkipped(); n != 0 {
		t.Fatalf("%d lines skipped: %+v", n, f.Skipped())
	}
	tests := []struct {
		ua, path  string
		crawlable bool
		want      string // the Usage, as String writes it
	}{
		{"OtherBot/1.0", "/test", true, "train-ai=n"},
		{"OtherBot/1.0", "/never/test", false, ""},
		{"OtherBot/1.0", "/ai-ok/test", true, "train-ai=y"},
		{"ExampleBot/2.1", "/test", true, "train-ai=y"},
		{"ExampleBot/2.1", "/never/test", true, "train-ai=y"},
		{"ExampleBot/2.1", "/ai-ok/test", true, "train-ai=y"},
	}
	for _, tc := range tests {
		u := mustURL(t, "https://example.com"+tc.path)
		m, err := f.Test(tc.ua, u)
		if err != nil || m.Allowed != tc.crawlable {
			t.Errorf("Test(%q, %s) = %+v, %v; want Allowed %v", tc.ua, tc.path, m, err, tc.crawlable)
		}
		got, err := f.Usage(tc.ua, u)
		if err != nil || got.String() != tc.want {
			t.Errorf("Usage(%q, %s) = %q, %v; want %q", tc.ua, tc.path, got, err, tc.want)
		}
	}
	if p, _ := f.Usage("OtherBot", mustURL(t, "https://example.com/test")); p.Of(TrainAI) != No || p.Of(Search) != Unknown {
		t.Errorf("Of: train-ai %v, search %v; want n, unknown", p.Of(TrainAI), p.Of(Search))
	}
	rules, err := f.Group("OtherBot").UsageRules("/ai-ok/test")
	if want := []string{"Content-Usage: /ai-ok/ train-ai=y"}; err != nil || !slices.Equal(ruleStrings(rules), want) {
		t.Errorf("UsageRules = %v, %v; want %v", ruleStrings(rules), err, want)
	}
}

func ruleStrings(rules []UsageRule) []string {
	var out []string
	for _, r := range rules {
		out = append(out, r.String())
	}
	return out
}

// TestPreferenceCombine checks the combination of draft-ietf-aipref-vocab-07
// §5.1: any n gives n; otherwise any y gives y; otherwise unknown.
func TestPreferenceCombine(t *testing.T) {
	all := []Preference{Unknown, Yes, No}
	for _, p := range all {
		for _, q := range all {
			want := Unknown
			switch {
			case p == No || q == No:
				want = No
			case p == Yes || q == Yes:
				want = Yes
			}
			if got := p.Combine(q); got != want {
				t.Errorf("%v.Combine(%v) = %v; want %v", p, q, got, want)
			}
		}
	}
}

// TestUsageCombine combines whole statements, category by category, the
// categories beyond the vocabulary's included.
func TestUsageCombine(t *testing.T) {
	tests := []struct{ a, b, want string }{
		{"train-ai=y", "train-ai=n", "train-ai=n"},
		{"train-ai=y", "search=n", "train-ai=y, search=n"},
		{"train-ai=y", "", "train-ai=y"},
		{"", "", ""},
		{"search=y, zebra=y", "alpha=n, zebra=n", "search=y, alpha=n, zebra=n"},
		{"alpha=y", "alpha=y", "alpha=y"},
		{"beta=y, delta=n", "alpha=y, gamma=y, delta=y", "alpha=y, beta=y, delta=n, gamma=y"},
	}
	for _, tc := range tests {
		a, b := mustUsage(t, tc.a), mustUsage(t, tc.b)
		if got := a.Combine(b).String(); got != tc.want {
			t.Errorf("%q.Combine(%q) = %q; want %q", tc.a, tc.b, got, tc.want)
		}
		if ab, ba := a.Combine(b), b.Combine(a); ab != ba {
			t.Errorf("Combine is not symmetric for %q, %q: %q, %q", tc.a, tc.b, ab, ba)
		}
	}
}

// TestParseContentUsage reads statements as draft-ietf-aipref-vocab-07 §6
// says, its own examples first.
func TestParseContentUsage(t *testing.T) {
	tests := []struct {
		in, want string
		bad      bool
	}{
		{"train-ai=y, search=n", "train-ai=y, search=n", false},         // §6
		{`train-ai=y, train-ai, search=n, search="n"`, "", false},       // §6.5.1: the last value counts
		{"train-ai;allow=n, train-ai=y", "train-ai=y", false},           // §6.5.2: parameters are ignored
		{`train-ai;has;parameters="?";`, "", true},                      // §6.5.2's example ends in a ';', which RFC 9651 refuses: unknown all the same
		{`train-ai;has;parameters="?"`, "", false},                      // without it, unknown for want of a value
		{"Train-AI=n", "", true},                                        // §6.5.1: keys are lower-case
		{"train-ai=N", "", false},                                       // a Token other than y or n
		{"train-ai=?0, search=1", "", false},                            // values of other types
		{"train-ai=(y n), search=:AQID:", "", false},                    // an inner list, a byte sequence
		{"future-use=n, train-ai=y", "train-ai=y, future-use=n", false}, // unknown labels are kept
		{"b=y, a=n, b=n", "a=n, b=n", false},                            // the last of a label counts
		{"b=y, a=n, b", "a=n", false},                                   // even when it says nothing
		{" train-ai=n ,\tsearch=y", "train-ai=n, search=y", false},      // SP before, OWS around commas
		{"", "", false},                        // the empty dictionary
		{"train-ai=n,", "", true},              // a trailing comma
		{"train-ai=n search=y", "", true},      // no comma
		{"\ttrain-ai=n", "", true},             // only SP may lead
		{"ai-train=no, search=yes", "", false}, // tokens, but "no" is no y or n; a Content-Signal's ai-train is not train-ai
		{"train-ai=y;q=1.5;d=@1700000000;s=%\"caf%c3%a9\"", "train-ai=y", false}, // parameters of every type
	}
	for _, tc := range tests {
		got, err := ParseContentUsage(tc.in)
		if tc.bad {
			if !errors.Is(err, ErrBadUsage) || got != (Usage{}) {
				t.Errorf("ParseContentUsage(%q) = %q, %v; want the zero Usage and ErrBadUsage", tc.in, got, err)
			}
			continue
		}
		if err != nil || got.String() != tc.want {
			t.Errorf("ParseContentUsage(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// TestParseContentSignal reads the Content Signals Policy's lines and
// fields, as Cloudflare writes them.
func TestParseContentSignal(t *testing.T) {
	tests := []struct{ in, want string }{
		{"search=yes, ai-train=no", "train-ai=n, search=y"},
		{"search=yes,ai-train=no", "train-ai=n, search=y"},
		{"ai-train=no, search=yes, ai-input=yes", "train-ai=n, search=y, ai-input=y"},
		{"ai-train=yes, search=yes, ai-input=yes", "train-ai=y, search=y, ai-input=y"},
		{"search=yes, ai-train=n", "search=y"},          // y and n are Content-Usage's
		{"search=yes, use=immediate", "search=y"},       // a value other than yes or no says nothing
		{"future=no, search=yes", "search=y, future=n"}, // unknown labels are kept
		{"", ""},
	}
	for _, tc := range tests {
		got, err := ParseContentSignal(tc.in)
		if err != nil || got.String() != tc.want {
			t.Errorf("ParseContentSignal(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	if _, err := ParseContentSignal("search = yes"); !errors.Is(err, ErrBadUsage) {
		t.Errorf("ParseContentSignal(%q): %v; want ErrBadUsage", "search = yes", err)
	}
}

func TestUsageWithAndAll(t *testing.T) {
	var u Usage
	u = u.With(TrainAI, No).With("zeta", Yes).With("alpha", No).With(Search, Yes).With("alpha", Unknown).With("Bad Label", No)
	if got, want := u.String(), "train-ai=n, search=y, zeta=y"; got != want {
		t.Errorf("String = %q; want %q", got, want)
	}
	var seen []string
	for c, p := range u.All() {
		seen = append(seen, fmt.Sprintf("%s:%v", c, p))
	}
	if want := []string{"train-ai:n", "search:y", "zeta:y"}; !slices.Equal(seen, want) {
		t.Errorf("All = %v; want %v", seen, want)
	}
	if u.Of("zeta") != Yes || u.Of("alpha") != Unknown || u.Of(AIInput) != Unknown {
		t.Errorf("Of: zeta %v, alpha %v, ai-input %v", u.Of("zeta"), u.Of("alpha"), u.Of(AIInput))
	}
	u = u.With("omega", No)
	for uses, want := range map[string]string{"train-ai,search,omega": "train-ai=n, omega=n", "search,zeta": "", "": ""} {
		var cats []Category
		for c := range strings.SplitSeq(uses, ",") {
			cats = append(cats, Category(c))
		}
		if got := u.Disallowed(cats...).String(); got != want {
			t.Errorf("Disallowed(%s) = %q; want %q", uses, got, want)
		}
	}
}

// TestUsageRules checks how a group's Content-Usage rules and
// Content-Signal lines decide a path.
func TestUsageRules(t *testing.T) {
	tests := []struct {
		name, robots, path, want string
	}{
		{"the longest path decides",
			"User-agent: *\nContent-Usage: / train-ai=y\nContent-Usage: /a/ train-ai=n\nContent-Usage: /a/b/ search=n\n",
			"/a/x", "train-ai=n"},
		{"a rule without a path is the shortest",
			"User-agent: *\nContent-Usage: /a/ train-ai=n\nContent-Usage: train-ai=y, search=y\n",
			"/a/x", "train-ai=n"},
		{"rules of the same path combine, whatever their order",
			"User-agent: *\nContent-Usage: /a/ train-ai=y\nContent-Usage: /a/ train-ai=n, search=y\n",
			"/a/x", "train-ai=n, search=y"},
		{"rules of equally long patterns combine",
			"User-agent: *\nContent-Usage: /a* train-ai=y\nContent-Usage: /ab search=n\n",
			"/abc", "train-ai=y, search=n"},
		{"patterns match as Allow and Disallow do: wildcards and $",
			"User-agent: *\nContent-Usage: /*.pdf$ train-ai=n\n",
			"/doc/x.pdf", "train-ai=n"},
		{"percent-encoding is normalised",
			"User-agent: *\nContent-Usage: /%7efoo/ train-ai=n\n",
			"/~foo/x", "train-ai=n"},
		{"a rule whose path does not match says nothing",
			"User-agent: *\nContent-Usage: /a/ train-ai=n\n",
			"/b", ""},
		{"Content-Signal and Content-Usage combine: the more restrictive wins",
			"User-agent: *\nContent-Signal: search=yes, ai-train=no\nContent-Usage: /a/ train-ai=y, search=n\n",
			"/a/x", "train-ai=n, search=n"},
		{"a longer Content-Usage rule does not override a Content-Signal line",
			"User-agent: *\nContent-Signal: ai-train=no\nContent-Usage: /a/ train-ai=y\n",
			"/a/x", "train-ai=n"},
		{"a Content-Signal line takes a path as Content-Usage does",
			"User-agent: *\nContent-Signal: ai-input=yes\nContent-Signal: /a/ ai-input=no\n",
			"/a/x", "ai-input=n"},
		{"a statement that does not parse holds its path, stating nothing",
			"User-agent: *\nContent-Usage: / train-ai=n\nContent-Usage: /blog/ Train-AI=y\n",
			"/blog/x", ""},
		{"groups naming one token combine their rules",
			"User-agent: a\nContent-Usage: train-ai=y\n\nUser-agent: a\nContent-Usage: train-ai=n\n",
			"/x", "train-ai=n"},
		{"a comment ends the statement",
			"User-agent: *\nContent-Usage: train-ai=n # no training\n",
			"/x", "train-ai=n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := Parse([]byte(tc.robots))
			u, err := f.Usage("a", mustURL(t, "http://h"+tc.path))
			if err != nil || u.String() != tc.want {
				t.Errorf("Usage(%s) = %q, %v; want %q\nrobots.txt:\n%s", tc.path, u, err, tc.want, tc.robots)
			}
		})
	}
}

// TestUsageLines checks how the reader takes Content-Usage and
// Content-Signal lines: which it skips and why, and where groups end.
func TestUsageLines(t *testing.T) {
	f := Parse([]byte(`Content-Usage: train-ai=n
Content-Signal: search=yes,ai-train=yes,ai-input=yes
User-agent: a
Content-Signal: ai-train=no
User-agent: b
Disallow: /private/
Content-Usage: /x/ train-ai=n search=y
User-agent: c
content-usage: /x/ TRAIN-AI=n
`))
	var got []string
	for _, l := range f.Skipped() {
		got = append(got, fmt.Sprintf("%d %s", l.Line, l.Reason))
	}
	want := []string{"1 rule outside any group", "2 Content-Signal outside any group", "7 bad Content-Usage", "9 bad Content-Usage"}
	if !slices.Equal(got, want) {
		t.Errorf("Skipped = %q; want %q", got, want)
	}
	if n := f.NumUsageRules(); n != 3 {
		t.Errorf("NumUsageRules = %d; want 3", n)
	}
	// A Content-Signal line does not end the user-agent lines: a and b are
	// one group. A Content-Usage rule does, as an Allow or Disallow does:
	// c starts another.
	for ua, want := range map[string]string{"a": "train-ai=n", "b": "train-ai=n", "c": ""} {
		if u, err := f.Usage(ua, mustURL(t, "http://h/y")); err != nil || u.String() != want {
			t.Errorf("Usage(%s, /y) = %q, %v; want %q", ua, u, err, want)
		}
	}
	if m, _ := f.Test("b", mustURL(t, "http://h/private/x")); m.Allowed || m.Group != "b" {
		t.Errorf("Test(b, /private/x) = %+v; want disallowed by group b", m)
	}
	groups := f.UsageGroups()
	if len(groups) != 2 || !slices.Equal(groups[0].Agents, []string{"a", "b"}) || !slices.Equal(groups[1].Agents, []string{"c"}) {
		t.Fatalf("UsageGroups = %+v", groups)
	}
	if got, want := ruleStrings(groups[0].Rules), []string{"Content-Signal: ai-train=no", "Content-Usage: /x/ train-ai=n search=y"}; !slices.Equal(got, want) {
		t.Errorf("UsageGroups()[0].Rules = %q; want %q", got, want)
	}
}

// TestUsageNotCrawlable checks that a path that may not be crawled has no
// preference, though a rule matches it (draft-ietf-aipref-attach-05 §3.1).
func TestUsageNotCrawlable(t *testing.T) {
	f := Parse([]byte("User-agent: *\nDisallow: /private/\nContent-Usage: train-ai=n\n"))
	for path, want := range map[string]string{"/private/x": "", "/public": "train-ai=n", "/robots.txt": "train-ai=n"} {
		if u, err := f.Usage("bot", mustURL(t, "http://h"+path)); err != nil || u.String() != want {
			t.Errorf("Usage(%s) = %q, %v; want %q", path, u, err, want)
		}
	}
	// Group.Usage leaves crawling to Decide.
	if u, _ := f.Group("bot").Usage("/private/x"); u.Of(TrainAI) != No {
		t.Errorf("Group.Usage(/private/x) = %q; want train-ai=n", u)
	}
}

// TestUsageLimit checks that a group of up to 1,000 usage rules and lines
// decides every path, the last rule too, and that one of more decides none
// and that a path too long is not decided either.
func TestUsageLimit(t *testing.T) {
	for _, n := range []int{maxUsageRules, maxUsageRules + 1} {
		var b strings.Builder
		b.WriteString("User-agent: *\n")
		for i := range n {
			fmt.Fprintf(&b, "Content-Usage: /*a%d*b train-ai=n\n", i)
		}
		g := Parse([]byte(b.String())).Group("bot")
		path := fmt.Sprintf("/xa%dxb", n-1) + strings.Repeat("c", MaxPathLength-20)
		u, err := g.Usage(path)
		switch {
		case n <= maxUsageRules && (err != nil || u.Of(TrainAI) != No):
			t.Errorf("Usage with %d rules = %q, %v; want train-ai=n by the last rule", n, u, err)
		case n > maxUsageRules && !errors.Is(err, ErrTooComplex):
			t.Errorf("Usage with %d rules: %v; want ErrTooComplex", n, err)
		}
	}
	g := Parse([]byte(attachExample)).Group("bot")
	if _, err := g.Usage("/" + strings.Repeat("a", MaxPathLength)); !errors.Is(err, ErrPathTooLong) {
		t.Errorf("Usage of a long path: %v; want ErrPathTooLong", err)
	}
	if u, err := Parse([]byte("User-agent: *\nDisallow: /x\n")).Group("bot").Usage("/" + strings.Repeat("a", 4*MaxPathLength)); err != nil || u != (Usage{}) {
		t.Errorf("Usage of a group with no usage rule = %q, %v; want nothing, and no error", u, err)
	}
}
