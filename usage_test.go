package polite

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/polite-go/polite/internal/robotstest"
	"github.com/polite-go/polite/robotstxt"
)

// attachRobots is the robots.txt of draft-ietf-aipref-attach-05 §3.4.
const attachRobots = robotstest.AttachExample

// usageSite is an httptest server that serves robots as /robots.txt and
// "ok" elsewhere, with the header fields of hdr, names and values in
// turn; it records the paths it was asked for, robots.txt apart.
type usageSite struct {
	*httptest.Server
	mu    sync.Mutex // guards paths
	paths []string
}

func newUsageSite(t *testing.T, robots string, hdr ...string) *usageSite {
	s := &usageSite{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, robots)
			return
		}
		s.mu.Lock()
		s.paths = append(s.paths, r.URL.Path)
		s.mu.Unlock()
		for i := 0; i+1 < len(hdr); i += 2 {
			w.Header().Add(hdr[i], hdr[i+1])
		}
		fmt.Fprint(w, "ok")
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *usageSite) asked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.paths)
}

// usageEvents collects the refusals a transport reports for a usage
// preference.
type usageEvents struct {
	mu     sync.Mutex // guards events
	events []Event
}

func (e *usageEvents) hook(ev Event) {
	if (ev.Kind == EventRefused || ev.Kind == EventWouldRefuse) && ev.Disallowed != (robotstxt.Usage{}) {
		e.mu.Lock()
		e.events = append(e.events, ev)
		e.mu.Unlock()
	}
}

func (e *usageEvents) list() []Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.events)
}

// TestUsageEnforce runs the example of draft-ietf-aipref-attach-05 §3.4
// through a transport that declares train-ai: the URL whose preference is
// train-ai=n is refused before it is sent, the others go through, and a
// bot with its own group takes that group's preference.
func TestUsageEnforce(t *testing.T) {
	s := newUsageSite(t, attachRobots)
	var events usageEvents
	tr := New(s.Client().Transport, opts(WithUserAgent("OtherBot/1.0"), WithUsage(RobotsEnforce, robotstxt.TrainAI), WithEvents(events.hook))...)
	client := &http.Client{Transport: tr}

	body := newBody("x")
	req, _ := http.NewRequest("POST", s.URL+"/test", body)
	resp, err := tr.RoundTrip(req)
	var ue *RobotsBlockedError
	if resp != nil || !errors.Is(err, ErrRobotsBlocked) || !errors.As(err, &ue) {
		t.Fatalf("RoundTrip(/test) = %v, %v; want a *RobotsBlockedError", resp, err)
	}
	if body.closes.Load() != 1 {
		t.Errorf("the refused request's body was closed %d times; want 1", body.closes.Load())
	}
	want := RobotsBlockedError{URL: s.URL + "/test", Agent: "otherbot", RobotsURL: s.URL + "/robots.txt",
		Uses: []robotstxt.Category{robotstxt.TrainAI}, Rule: "Content-Usage: train-ai=n"}
	if ue.URL != want.URL || ue.Agent != want.Agent || ue.RobotsURL != want.RobotsURL || !slices.Equal(ue.Uses, want.Uses) ||
		ue.Rule != want.Rule || ue.Usage.String() != "train-ai=n" || ue.RetryableError() {
		t.Errorf("error %+v; want %+v", *ue, want)
	}
	if got, wantText := err.Error(), "train-ai=n (Content-Usage: train-ai=n)"; !strings.HasSuffix(got, wantText) {
		t.Errorf("Error() = %q; want it to end in %q", got, wantText)
	}

	for path, wantErr := range map[string]error{"/ai-ok/test": nil, "/never/test": ErrRobotsBlocked, "/test?x=1": ErrRobotsBlocked} {
		resp, err := client.Get(s.URL + path)
		if resp != nil {
			resp.Body.Close()
		}
		if wantErr == nil && err != nil || wantErr != nil && !errors.Is(err, wantErr) {
			t.Errorf("Get(%s): %v; want %v", path, err, wantErr)
		}
	}
	// ExampleBot's own group says train-ai=y.
	req, _ = http.NewRequest("GET", s.URL+"/test", nil)
	req.Header.Set("User-Agent", "ExampleBot/1.0")
	if resp, err := client.Do(req); err != nil {
		t.Errorf("ExampleBot's /test: %v; want it sent", err)
	} else {
		resp.Body.Close()
	}

	if got, want := s.asked(), []string{"/ai-ok/test", "/test"}; !slices.Equal(got, want) {
		t.Errorf("the server was asked for %v; want %v", got, want)
	}
	st := statsOf(t, tr)
	if len(st) != 1 || st[0].UsageRefused != 2 || st[0].UsageWouldRefuse != 0 || st[0].Refused != 1 {
		t.Errorf("Stats = %+v; want 2 refused for their use, 1 by robots.txt", st)
	}
	evs := events.list()
	if len(evs) != 2 || evs[0].Kind != EventRefused || evs[0].Disallowed.String() != "train-ai=n" ||
		evs[0].Rule != "Content-Usage: train-ai=n" || evs[0].URL != s.URL+"/test" {
		t.Errorf("events %+v; want two EventRefused, train-ai=n", evs)
	}
}

// TestUsageReport checks that RobotsReport mode sends what RobotsEnforce
// would refuse, and counts it.
func TestUsageReport(t *testing.T) {
	s := newUsageSite(t, attachRobots)
	var events usageEvents
	tr := New(s.Client().Transport, opts(WithUserAgent("OtherBot/1.0"), WithUsage(RobotsReport, robotstxt.TrainAI, robotstxt.Search), WithEvents(events.hook))...)
	for _, path := range []string{"/test", "/ai-ok/test", "/test"} {
		resp, err := get(tr, s.URL+path, "")
		if err != nil {
			t.Fatalf("%s: %v; want it sent", path, err)
		}
		resp.Body.Close()
	}
	if got := s.asked(); len(got) != 3 {
		t.Errorf("the server was asked for %v; want all three", got)
	}
	if st := statsOf(t, tr); len(st) != 1 || st[0].UsageWouldRefuse != 2 || st[0].UsageRefused != 0 {
		t.Errorf("Stats = %+v; want 2 that RobotsEnforce would refuse", st)
	}
	evs := events.list()
	if len(evs) != 2 || evs[0].Kind != EventWouldRefuse || evs[0].Disallowed.String() != "train-ai=n" {
		t.Errorf("events %+v; want two EventWouldRefuse, train-ai=n", evs)
	}
}

// TestUsageSignals checks that the transport reads Content-Signal lines as
// Content-Usage rules, that only the uses declared count, and that
// without WithUsage nothing is refused.
func TestUsageSignals(t *testing.T) {
	const robots = "User-agent: *\nContent-Signal: search=yes, ai-train=no\nContent-Usage: /ok/ train-ai=y\n"
	tests := []struct {
		name    string
		opt     Option
		path    string
		blocked bool
	}{
		{"a Content-Signal line says no", WithUsage(RobotsEnforce, robotstxt.TrainAI), "/x", true},
		{"the more restrictive wins over a longer Content-Usage rule", WithUsage(RobotsEnforce, robotstxt.TrainAI), "/ok/x", true},
		{"search is allowed", WithUsage(RobotsEnforce, robotstxt.Search), "/x", false},
		{"ai-input is not stated", WithUsage(RobotsEnforce, robotstxt.AIInput, robotstxt.Search), "/x", false},
		{"any declared use refused refuses", WithUsage(RobotsEnforce, robotstxt.Search, robotstxt.TrainAI), "/x", true},
		{"no use declared", WithUsage(RobotsEnforce), "/x", false},
		{"robots.txt off", WithRobotsMode(RobotsOff), "/x", false},
		{"no WithUsage", WithUserAgent("bot"), "/x", false},
	}
	s := newUsageSite(t, robots)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := New(s.Client().Transport, opts(tc.opt)...)
			if tc.name == "robots.txt off" {
				tr = New(s.Client().Transport, opts(WithUsage(RobotsEnforce, robotstxt.TrainAI), tc.opt)...)
			}
			resp, err := get(tr, s.URL+tc.path, "")
			if resp != nil {
				resp.Body.Close()
			}
			if blocked := errors.Is(err, ErrRobotsBlocked); blocked != tc.blocked || !blocked && err != nil {
				t.Errorf("%s: %v; want blocked %v", tc.path, err, tc.blocked)
			}
		})
	}
}

// TestCheckUsage checks that Check reports the preferences, and what the
// declared uses make of them.
func TestCheckUsage(t *testing.T) {
	s := newUsageSite(t, attachRobots)
	tr := New(s.Client().Transport, opts(WithUserAgent("OtherBot/1.0"), WithUsage(RobotsEnforce, robotstxt.TrainAI))...)
	for path, want := range map[string][2]string{"/test": {"train-ai=n", "train-ai=n"}, "/ai-ok/x": {"train-ai=y", ""}, "/never/x": {"", ""}} {
		req, _ := http.NewRequest("GET", s.URL+path, nil)
		d, err := tr.Check(req)
		if err != nil || d.Usage.String() != want[0] || d.UsageBlocked.String() != want[1] {
			t.Errorf("Check(%s) = Usage %q, UsageBlocked %q, %v; want %q, %q", path, d.Usage, d.UsageBlocked, err, want[0], want[1])
		}
	}
	if got := s.asked(); len(got) != 0 {
		t.Errorf("Check sent %v", got)
	}
}

// TestResponseUsage checks that a response's preferences combine its
// header fields and its robots.txt's, the most restrictive winning.
func TestResponseUsage(t *testing.T) {
	s := newUsageSite(t, "User-agent: *\nContent-Signal: ai-train=no, search=yes\n",
		"Content-Usage", "search=n", "Content-Usage", "train-ai=y", "Content-Signal", "ai-input=no")
	tr := New(s.Client().Transport, quick...)
	resp, err := (&http.Client{Transport: tr}).Get(s.URL + "/page")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	got, err := tr.ResponseUsage(resp)
	if want := "train-ai=n, search=n, ai-input=n"; err != nil || got.String() != want {
		t.Errorf("ResponseUsage = %q, %v; want %q", got, err, want)
	}
	if _, err := tr.ResponseUsage(&http.Response{}); err == nil {
		t.Error("ResponseUsage of a response without a request: no error")
	}

	// A response of a URL robots.txt is off for has its header's only.
	off := New(s.Client().Transport, opts(WithRobotsMode(RobotsOff))...)
	if got, err := off.ResponseUsage(resp); err != nil || got.String() != "train-ai=y, search=n, ai-input=n" {
		t.Errorf("ResponseUsage with robots.txt off = %q, %v", got, err)
	}
}

func TestHeaderUsage(t *testing.T) {
	tests := []struct {
		hdr  http.Header
		want string
		bad  bool
	}{
		{http.Header{"Content-Usage": {"train-ai=n"}}, "train-ai=n", false},
		{http.Header{"Content-Usage": {"train-ai=y", "search=n"}}, "train-ai=y, search=n", false},
		{http.Header{"Content-Usage": {"train-ai=y", "train-ai=n"}}, "train-ai=n", false}, // lines joined: the last counts
		{http.Header{"Content-Usage": {"train-ai=y"}, "Content-Signal": {"ai-train=no"}}, "train-ai=n", false},
		{http.Header{"Content-Usage": {"TRAIN-AI=n"}, "Content-Signal": {"search=no"}}, "search=n", true},
		{http.Header{}, "", false},
	}
	for _, tc := range tests {
		got, err := robotstxt.HeaderUsage(tc.hdr)
		if got.String() != tc.want || (err != nil) != tc.bad || tc.bad && !errors.Is(err, robotstxt.ErrBadUsage) {
			t.Errorf("robotstxt.HeaderUsage(%v) = %q, %v; want %q, error %v", tc.hdr, got, err, tc.want, tc.bad)
		}
	}
}

func TestWithUsageInvalid(t *testing.T) {
	for _, o := range []Option{WithUsage(RobotsMode(9), robotstxt.TrainAI), WithUsage(RobotsEnforce, "Train AI")} {
		if err := Validate(o); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("Validate: %v; want ErrInvalidConfig", err)
		}
	}
	if got := RobotsReport.String(); got != "RobotsReport" {
		t.Errorf("String = %q", got)
	}
}

// TestUsageURLError checks that through http.Client the refusal still
// matches, inside a *url.Error.
func TestUsageURLError(t *testing.T) {
	s := newUsageSite(t, attachRobots)
	client := &http.Client{Transport: New(s.Client().Transport, opts(WithUsage(RobotsEnforce, robotstxt.TrainAI))...)}
	_, err := client.Get(s.URL + "/test")
	var ue *url.Error
	if !errors.As(err, &ue) || !errors.Is(err, ErrRobotsBlocked) {
		t.Errorf("Get: %v; want a *url.Error matching ErrRobotsBlocked", err)
	}
}

// TestUsageBlockedRules checks that the error names only the lines that
// disallow a declared use.
func TestUsageBlockedRules(t *testing.T) {
	s := newUsageSite(t, "User-agent: *\nContent-Usage: search=y, train-ai=y\nContent-Signal: ai-train=no, search=no\n")
	tr := New(s.Client().Transport, opts(WithUsage(RobotsEnforce, robotstxt.TrainAI))...)
	_, err := get(tr, s.URL+"/x", "")
	var ue *RobotsBlockedError
	if !errors.As(err, &ue) || ue.Rule != "Content-Signal: ai-train=no, search=no" ||
		!slices.Equal(ue.Uses, []robotstxt.Category{robotstxt.TrainAI}) || ue.Usage.String() != "train-ai=n, search=n" {
		t.Errorf("RoundTrip: %v; want a *RobotsBlockedError naming the Content-Signal line", err)
	}
}
