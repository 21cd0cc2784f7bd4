package robotstxt

import (
	"errors"
	"strings"
	"testing"
)

// TestParseDictionary checks the parser against the syntax of RFC 9651
// §4.2: every type of item, in values and parameters, its limits, and the
// separators.
func TestParseDictionary(t *testing.T) {
	good := []string{
		"a=1, b=-1, c=999999999999999, d=-999999999999999",
		"a=1.5, b=-0.001, c=123456789012.123, d=0.0",
		`a="", b="x y", c="\"", d="\\", e="~!#"`,
		"a=tok, b=*x, c=T:/x/y!#$%&'*+-.^_`|~",
		"a=:AQID:, b=::, c=:YQ==:, d=:YQ:, e=:YWI=:",
		"a=?0, b=?1, c",
		"a=@0, b=@-1659578233",
		`a=%"", b=%"caf%c3%a9", c=%"%22%25"`,
		"a=(), b=(1 2), c=(x;p=1 \"s\");q=?0, d=(  1  2  )",
		"a;p, b=1;p=2;q, *c=x, d.e_f-g*=y",
		"a=1;p=:AQ==:;q=@1;r=%\"x\";s=1.5",
		"a=1 ,  b=2,\tc=3",
		"a=1 \t",
		"  a=1",
	}
	for _, s := range good {
		if err := parseDictionary(s, func(sfMember) {}); err != nil {
			t.Errorf("parseDictionary(%q): %v; want it to parse", s, err)
		}
	}
	bad := []string{
		"A=1", "1a=1", "-a=1", "a b", "a=1,", "a=1,,b=2", ",a=1", "a=", "a==1", "\ta=1",
		"a=1000000000000000", "a=-1000000000000000", "a=-", "a=1.", "a=1.2345", "a=1234567890123.1", "a=1.2.3", "a=- 1",
		`a="x`, `a="\x"`, "a=\"\x01\"", "a=\"é\"",
		"a=:AQ", "a=:A?:", "a=:A=B:", "a=:AQ===:", "a=:A:",
		"a=?2", "a=?",
		"a=@1.5", "a=@x",
		`a=%x`, `a=%"x`, `a=%"%C3%A9"`, `a=%"%c3"`, `a=%"%2"`, "a=%\"\x7f\"",
		"a=(1", "a=(1,2)", "a=(1)x", "a=((1))",
		"a;", "a;P", "a;p=", "a=1;",
		"a=#", "a=é",
	}
	for _, s := range bad {
		err := parseDictionary(s, func(sfMember) {})
		var e *sfError
		if !errors.As(err, &e) || !errors.Is(err, errDictionary) || e.at < 0 || e.at > len(s) {
			t.Errorf("parseDictionary(%q) = %v; want an *sfError", s, err)
		}
	}
}

// TestParseDictionaryMembers checks what the parser reports of each member.
func TestParseDictionaryMembers(t *testing.T) {
	var got []string
	err := parseDictionary(`a=y, b, c="y", d=y;p=n, e=(y), a=n, f=*`, func(m sfMember) {
		got = append(got, m.key+"="+m.token)
	})
	want := "a=y b= c= d=y e= a=n f=*"
	if err != nil || strings.Join(got, " ") != want {
		t.Errorf("members %q, %v; want %q", strings.Join(got, " "), err, want)
	}
}

// FuzzParseContentUsage checks the field parser on any input: it never
// panics; a statement it reads, written back by String, reads the same;
// space before a statement changes nothing; a member appended to a
// statement is read beside it, and changes nothing else; and the two
// vocabularies accept the same statements.
//
//	go test -run '^$' -fuzz '^FuzzParseContentUsage$' -fuzztime 60s ./robotstxt
func FuzzParseContentUsage(f *testing.F) {
	for _, s := range []string{
		"train-ai=y, search=n",
		`train-ai=y, train-ai, search=n, search="n"`,
		"train-ai;allow=n, train-ai=y",
		"search=yes, ai-train=no, ai-input=no",
		"a=(1 2.5 \"x\" :AQ==: ?1 @1 %\"%c3%a9\");p=tok",
		"zz=y, aa=n, zz=n",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := ParseContentUsage(s)
		_, errSignal := ParseContentSignal(s)
		if (err == nil) != (errSignal == nil) {
			t.Fatalf("%q: Content-Usage %v, Content-Signal %v", s, err, errSignal)
		}
		if err != nil {
			if !errors.Is(err, ErrBadUsage) || u != (Usage{}) {
				t.Fatalf("%q: %q, %v; want the zero Usage and ErrBadUsage", s, u, err)
			}
			return
		}
		again, err := ParseContentUsage(u.String())
		if err != nil || again != u {
			t.Fatalf("%q reads %q, which reads %q, %v", s, u, again, err)
		}
		if spaced, err := ParseContentUsage("  " + s); err != nil || spaced != u {
			t.Fatalf("%q with leading spaces reads %q, %v; want %q", s, spaced, err, u)
		}
		if strings.TrimRight(s, " \t") == "" {
			return
		}
		more, err := ParseContentUsage(s + ", zz-fuzz=n")
		if want := u.With("zz-fuzz", No); err != nil || more != want {
			t.Fatalf("%q with a member appended reads %q, %v; want %q", s, more, err, want)
		}
	})
}
