package polite

import (
	"errors"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/polite-go/polite/internal/robotstest"
	"github.com/polite-go/polite/pace"
	"github.com/polite-go/polite/robotstxt"
)

// get sends a GET for rawURL with the User-Agent ua ("" for none) through t.
func get(t *PoliteTransport, rawURL, ua string) (*http.Response, error) {
	req, err := http.NewRequest("GET", rawURL, nil)
	if err != nil {
		panic(err)
	}
	if ua != "" {
		req.Header.Set("User-Agent", ua)
	}
	return t.RoundTrip(req)
}

// allowedBy reports whether robots lets ua fetch rawURL, as the transport
// decides it end to end, and checks that a refused URL never reached the
// base.
func allowedBy(tb testing.TB, robots, ua, rawURL string) bool {
	tb.Helper()
	base := site(robots)
	tr := New(base, quick...)
	resp, err := get(tr, rawURL, ua)
	switch {
	case err == nil:
		resp.Body.Close()
		return true
	case errors.Is(err, ErrRobotsBlocked):
		for _, u := range base.requests() {
			if !strings.HasSuffix(u, "/robots.txt") {
				tb.Fatalf("refused %s, yet the base was asked for %s", rawURL, u)
			}
		}
		return false
	default:
		tb.Fatalf("RoundTrip(%s) = %v; want a response or ErrRobotsBlocked", rawURL, err)
		return false
	}
}

// rfc5_1 is the example of RFC 9309 §5.1.
const rfc5_1 = robotstest.RFC9309Example

// TestRFC9309 holds a case for each normative rule of RFC 9309 §2 that
// bears on matching, plus the examples of §5. Fetching and status handling
// are tested in robots_fetch_test.go.
func TestRFC9309(t *testing.T) {
	tests := []struct {
		name   string
		robots string
		ua     string
		url    string
		want   bool
	}{
		// §2.2.1: groups are chosen by product token, case-insensitively.
		{"2.2.1 token case-insensitive", "User-agent: ExampleBot\nDisallow: /\n", "examplebot/1.0", "http://h/x", false},
		{"2.2.1 token from full User-Agent", "User-agent: mybot\nDisallow: /\n", "MyBot/1.0 (+https://example.com/bot)", "http://h/x", false},
		{"2.2.1 exact token, not a prefix", "User-agent: mybot\nDisallow: /\n", "mybotnet/2", "http://h/x", true},
		{"2.2.1 group token not a prefix of the agent", "User-agent: my\nDisallow: /\n", "mybot", "http://h/x", true},
		{"2.2.1 matching groups combined", "User-agent: a\nDisallow: /x\n\nUser-agent: b\nDisallow: /y\n\nUser-agent: a\nDisallow: /z\n", "a", "http://h/z", false},
		{"2.2.1 matching groups combined, first", "User-agent: a\nDisallow: /x\n\nUser-agent: b\nDisallow: /y\n\nUser-agent: a\nDisallow: /z\n", "a", "http://h/x", false},
		{"2.2.1 other group not combined", "User-agent: a\nDisallow: /x\n\nUser-agent: b\nDisallow: /y\n", "a", "http://h/y", true},
		{"2.2.1 star group when none matches", "User-agent: other\nDisallow: /\n\nUser-agent: *\nDisallow: /s\n", "mybot", "http://h/s", false},
		{"2.2.1 named group beats star", "User-agent: *\nDisallow: /\n\nUser-agent: mybot\nDisallow: /p\n", "mybot", "http://h/q", true},
		{"2.2.1 no match and no star: no rules", "User-agent: other\nDisallow: /\n", "mybot", "http://h/x", true},
		{"2.2.1 no groups at all", "Sitemap: http://h/s.xml\n", "mybot", "http://h/x", true},
		{"2.2.1 empty file", "", "mybot", "http://h/x", true},
		{"2.2.1 several user-agent lines start one group", "User-agent: a\nUser-agent: mybot\nDisallow: /p\n", "mybot", "http://h/p", false},
		{"2.2.1 go default agent", "User-agent: Go-http-client\nDisallow: /\n", "", "http://h/p", false},

		// §2.2.2: longest match, Allow on ties, start at the first octet, case-sensitive.
		{"2.2.2 longest match allow", "User-agent: *\nDisallow: /a\nAllow: /a/b\n", "x", "http://h/a/b/c", true},
		{"2.2.2 longest match disallow", "User-agent: *\nAllow: /a\nDisallow: /a/b\n", "x", "http://h/a/b/c", false},
		{"2.2.2 allow wins a tie (disallow first)", "User-agent: *\nDisallow: /page\nAllow: /page\n", "x", "http://h/page", true},
		{"2.2.2 allow wins a tie (allow first)", "User-agent: *\nAllow: /page\nDisallow: /page\n", "x", "http://h/page", true},
		{"2.2.2 allow wins a tie on /", "User-agent: *\nDisallow: /\nAllow: /\n", "x", "http://h/page", true},
		{"2.2.2 match starts at first octet", "User-agent: *\nDisallow: /bar\n", "x", "http://h/foo/bar", true},
		{"2.2.2 case-sensitive path", "User-agent: *\nDisallow: /Private\n", "x", "http://h/private", true},
		{"2.2.2 case-sensitive path, same case", "User-agent: *\nDisallow: /Private\n", "x", "http://h/Private/x", false},
		{"2.2.2 no matching rule: allowed", "User-agent: *\nDisallow: /a\n", "x", "http://h/b", true},
		{"2.2.1 blank line does not end the user-agent lines", "User-agent: mybot\n\nUser-agent: *\nDisallow: /\n", "mybot", "http://h/b", false},
		{"2.2.2 group with no rules: allowed", "User-agent: *\nDisallow: /\n\nUser-agent: mybot\n", "mybot", "http://h/b", true},
		{"2.2.2 /robots.txt implicitly allowed", "User-agent: *\nDisallow: /\n", "x", "http://h/robots.txt", true},
		{"2.2.2 query is part of the path", "User-agent: *\nDisallow: /search?q=\n", "x", "http://h/search?q=go", false},
		{"2.2.2 query order kept", "User-agent: *\nDisallow: /list?b=2&a=1\n", "x", "http://h/list?b=2&a=1", false},
		{"2.2.2 unreserved escape in URI decoded", "User-agent: *\nDisallow: /~foo\n", "x", "http://h/%7Efoo", false},
		{"2.2.2 unreserved escape in rule decoded", "User-agent: *\nDisallow: /%7Efoo\n", "x", "http://h/~foo", false},
		{"2.2.2 rfc table %62%61%7A is baz", "User-agent: *\nDisallow: /foo/bar/baz\n", "x", "http://h/foo/bar/%62%61%7A", false},
		{"2.2.2 non-ASCII rule encoded", "User-agent: *\nDisallow: /foo/bar/ツ\n", "x", "http://h/foo/bar/%E3%83%84", false},
		{"2.2.2 non-ASCII URI encoded", "User-agent: *\nDisallow: /foo/bar/%E3%83%84\n", "x", "http://h/foo/bar/ツ", false},
		{"2.2.2 hex case normalised", "User-agent: *\nDisallow: /caf%c3%a9\n", "x", "http://h/caf%C3%A9", false},
		{"2.2.2 %2F stays distinct from /", "User-agent: *\nDisallow: /a/b\n", "x", "http://h/a%2Fb", true},
		{"2.2.2 %2F matches %2f", "User-agent: *\nDisallow: /a%2fb\n", "x", "http://h/a%2Fb", false},

		// §2.2.3: special characters.
		{"2.2.3 # starts a comment", "User-agent: * # everyone\nDisallow: /a # not /b\n", "x", "http://h/a", false},
		{"2.2.3 comment is not part of the path", "User-agent: *\nDisallow: /a#b\n", "x", "http://h/ab", false},
		{"2.2.3 * matches any sequence", "User-agent: *\nDisallow: /*.php\n", "x", "http://h/dir/index.php?x=1", false},
		{"2.2.3 * matches the empty sequence", "User-agent: *\nDisallow: /a*b\n", "x", "http://h/ab", false},
		{"2.2.3 $ anchors the end", "User-agent: *\nDisallow: /*.php$\n", "x", "http://h/index.php", false},
		{"2.2.3 $ anchors the end, longer", "User-agent: *\nDisallow: /*.php$\n", "x", "http://h/index.php?x", true},
		{"2.2.3 $ with repeated suffix", "User-agent: *\nDisallow: /*.php$\n", "x", "http://h/a.php.php", false},
		{"2.2.3 %2A matches a literal *", "User-agent: *\nDisallow: /path/file-with-a-%2A.html\n", "x", "http://h/path/file-with-a-*.html", false},
		{"2.2.3 %24 matches a literal $", "User-agent: *\nDisallow: /path/foo-%24\n", "x", "http://h/path/foo-$", false},
		{"2.2.3 %24 is not an anchor", "User-agent: *\nDisallow: /path/foo-%24\n", "x", "http://h/path/foo-bar", true},

		// §2.2.4: other records do not break groups.
		{"2.2.4 sitemap inside a group", "User-agent: mybot\nSitemap: http://h/s.xml\nDisallow: /p\n", "mybot", "http://h/p", false},
		{"2.2.4 unknown record inside a group", "User-agent: mybot\nNoindex: /x\nDisallow: /p\n", "mybot", "http://h/p", false},
		{"2.2.4 keys case-insensitive", "USER-AGENT: *\nDISALLOW: /p\n", "x", "http://h/p", false},

		// §2.3.1.5: parse every line, use the parseable rules.
		{"2.3.1.5 bad Crawl-delay keeps the rules", "User-agent: *\nCrawl-delay: 1s\nDisallow: /private\n", "x", "http://h/private", false},
		{"2.3.1.5 rule before any group ignored", "Disallow: /a\nUser-agent: *\nDisallow: /b\n", "x", "http://h/b", false},
		{"2.3.1.5 rule before any group binds no one", "Disallow: /a\nUser-agent: *\nDisallow: /b\n", "x", "http://h/a", true},
		{"2.3.1.5 junk lines", "<html>\nUser-agent: *\n}{ junk\nDisallow: /p\n", "x", "http://h/p", false},
		{"2.3.1.5 CRLF and CR line ends", "User-agent: *\r\nDisallow: /a\rDisallow: /b\r\n", "x", "http://h/b", false},
		{"2.3.1.5 byte order mark", "\ufeffUser-agent: *\nDisallow: /p\n", "x", "http://h/p", false},
		{"2.3.1.5 path not starting with / ignored", "User-agent: *\nDisallow: p\nDisallow: /q\n", "x", "http://h/p", true},

		// §5.1 and §5.2.
		{"5.1 star gif", rfc5_1, "x", "http://h/a/b.gif", false},
		{"5.1 star example", rfc5_1, "x", "http://h/example/x", false},
		{"5.1 star publications", rfc5_1, "x", "http://h/publications/x", true},
		{"5.1 foobot page allowed", rfc5_1, "foobot", "http://h/example/page.html", true},
		{"5.1 foobot gif allowed", rfc5_1, "foobot", "http://h/example/allowed.gif", true},
		{"5.1 foobot other disallowed", rfc5_1, "foobot", "http://h/publications/x", false},
		{"5.1 barbot page disallowed", rfc5_1, "barbot", "http://h/example/page.html", false},
		{"5.1 bazbot page disallowed", rfc5_1, "bazbot", "http://h/example/page.html", false},
		{"5.1 bazbot gif allowed", rfc5_1, "bazbot", "http://h/a.gif", true},
		{"5.1 quxbot everything allowed", rfc5_1, "quxbot", "http://h/example/page.html", true},
		{"5.2 longest match dir", "User-Agent: foobot\nAllow: /example/page/\nDisallow: /example/page/disallowed.gif\n", "foobot", "http://h/example/page/", true},
		{"5.2 longest match file", "User-Agent: foobot\nAllow: /example/page/\nDisallow: /example/page/disallowed.gif\n", "foobot", "http://h/example/page/disallowed.gif", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := allowedBy(t, tt.robots, tt.ua, tt.url); got != tt.want {
				t.Errorf("robots.txt:\n%s\nUA %q, %s: allowed = %v; want %v", tt.robots, tt.ua, tt.url, got, tt.want)
			}
		})
	}
}

// TestFormerDeviations pins the RFC 9309 behaviour where the transport once
// followed temoto/robotstxt instead: wildcard patterns are anchored at the
// start of the path (§2.2.2), and a wildcard rule is as long as its
// pattern's octets, not a regular expression's (§2.2.2).
func TestFormerDeviations(t *testing.T) {
	tests := []struct {
		name   string
		robots string
		url    string
		want   bool
	}{
		{"a wildcard pattern is anchored", "User-agent: *\nDisallow: /foo/*/bar\n", "http://h/x/foo/y/bar", true},
		{"an anchored wildcard pattern matches", "User-agent: *\nDisallow: /foo/*/bar\n", "http://h/foo/y/bar", false},
		{"a wildcard rule is as long as its octets", "User-agent: *\nAllow: /ab.c\nDisallow: /*.c\n", "http://h/ab.c", true},
		{"a longer wildcard rule wins", "User-agent: *\nAllow: /ab.c\nDisallow: /*b.c\n", "http://h/ab.c", true},
		{"longer still wins", "User-agent: *\nAllow: /ab.c\nDisallow: /a*b.c\n", "http://h/ab.c", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := allowedBy(t, tt.robots, "x", tt.url); got != tt.want {
				t.Errorf("%s allowed = %v; want %v (RFC 9309 §2.2.2)", tt.url, got, tt.want)
			}
		})
	}
}

func TestBlockedErrorSaysWhy(t *testing.T) {
	tr := New(site("User-agent: *\nDisallow: /a\nDisallow: /a/secret\nAllow: /a/secret/ok\n"), opts(WithUserAgent("MyBot/1.0"))...)
	_, err := get(tr, "http://Example.com/a/secret/x?y=1", "")
	var be *RobotsBlockedError
	if !errors.As(err, &be) {
		t.Fatalf("err = %v; want a *RobotsBlockedError", err)
	}
	want := RobotsBlockedError{URL: "http://Example.com/a/secret/x?y=1", Agent: "mybot",
		RobotsURL: "http://example.com/robots.txt", Rule: "Disallow: /a/secret"}
	if !reflect.DeepEqual(*be, want) {
		t.Errorf("error = %+v; want %+v", *be, want)
	}
	if !strings.Contains(err.Error(), "Disallow: /a/secret") {
		t.Errorf("Error() = %q; want it to name the rule", err)
	}
}

// TestUndecidedPathFollowsFailurePolicy checks the rule for paths too long
// for robots.txt to decide: the undecided policy of WithRobotsFailure,
// FailClosed by default whatever the policy for an unreachable file,
// refuses them with a *RobotsBlockedError whose Reason says why; FailOpen
// sends them, but not silently: an EventWouldRefuse, and Check's Reason,
// say so; and Stats counts them either way.
func TestUndecidedPathFollowsFailurePolicy(t *testing.T) {
	long := "http://h/" + strings.Repeat("a", robotstxt.MaxPathLength)
	_, _, undecided := robotstxt.Parse([]byte("User-agent: *\nDisallow: /private/\n")).Group("x").Decide(long[len("http://h"):])
	why := "robots.txt does not decide it (" + undecided.Error() + "), and the policy for what it does not decide is "
	for _, tc := range []struct {
		name   string
		opts   []Option
		policy FailurePolicy // what decides
		sent   bool
	}{
		{"default", nil, FailClosed, false},
		{"FailOpen for unreachable files only", []Option{WithRobotsFailure(FailOpen, FailClosed)}, FailClosed, false},
		{"FailOpen", []Option{WithRobotsFailure(FailClosed, FailOpen)}, FailOpen, true},
		{"FailClosed", []Option{WithRobotsFailure(FailOpen, FailClosed)}, FailClosed, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var events []Event
			hook := func(ev Event) {
				mu.Lock()
				defer mu.Unlock()
				if ev.Kind != EventRobotsFetched && ev.Kind != EventSent {
					ev.Time = time.Time{}
					events = append(events, ev)
				}
			}
			base := site("User-agent: *\nDisallow: /private/\n")
			tr := New(base, opts(append(tc.opts, WithEvents(hook))...)...)
			resp, err := get(tr, long, "")
			var be *RobotsBlockedError
			switch {
			case tc.sent && err != nil:
				t.Fatalf("RoundTrip = %v; want the request sent", err)
			case tc.sent:
				resp.Body.Close()
			case !errors.As(err, &be) || be.Reason != why+tc.policy.String() || be.Rule != "":
				t.Fatalf("RoundTrip = %v; want a *RobotsBlockedError whose Reason is %q", err, why+tc.policy.String())
			}
			wantKind := EventRefused
			if tc.sent {
				wantKind = EventWouldRefuse
			}
			want := []Event{{Kind: wantKind, Key: "h", URL: long, Reason: why + tc.policy.String(), Group: "*"}}
			if !tc.sent { // a refusal says what held the request up: the robots.txt fetch
				want[0].Waits = []pace.Wait{{Cause: pace.CauseRobots}}
			}
			mu.Lock()
			same := func(a, b Event) bool { // on the wall clock: the waits' causes alone
				a = plain(a)
				for i := range a.Waits {
					a.Waits[i].Duration = 0
				}
				return reflect.DeepEqual(a, b)
			}
			if !slices.EqualFunc(events, want, same) {
				t.Errorf("events %+v; want %+v", events, want)
			}
			mu.Unlock()
			stats := statsOf(t, tr)
			if len(stats) != 1 || stats[0].Undecided != 1 || stats[0].Refused != map[bool]uint64{true: 0, false: 1}[tc.sent] {
				t.Errorf("Stats %+v; want one undecided request, refused %v", stats, !tc.sent)
			}

			req, _ := http.NewRequest("GET", long, nil)
			d, err := tr.Check(req)
			if err != nil || d.Allowed != tc.sent || d.Reason != why+tc.policy.String() || !d.RobotsKnown {
				t.Errorf("Check = %+v, %v; want Allowed %v and Reason %q", d, err, tc.sent, why+tc.policy.String())
			}
			if ok := allowedBy(t, "User-agent: *\nDisallow:\n", "", long); !ok {
				t.Errorf("a long path was refused by a file with no rules; want it allowed: no rule applies")
			}
		})
	}
}

// FuzzRequestPath checks that requestPath gives what
// robotstxt.RequestPath does, whether the path fits its room or not.
func FuzzRequestPath(f *testing.F) {
	for _, s := range []string{"http://h/a?b=c", "http://h/?", "http://h", "http://h/caf%C3%A9?x=%20", "http://h/a b?c d", "*", "//h/p?q"} {
		f.Add(s, 4)
	}
	f.Fuzz(func(t *testing.T, raw string, room int) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		want, wantOK := robotstxt.RequestPath(u)
		got, ok := requestPath(u, make([]byte, 0, max(room, 0)%512))
		if got != want || ok != wantOK {
			t.Errorf("requestPath(%q) = %q, %v; want %q, %v", raw, got, ok, want, wantOK)
		}
	})
}
