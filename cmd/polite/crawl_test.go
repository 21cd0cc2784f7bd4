package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// crawlLine is a line of crawl's output, decoded strictly.
type crawlLine struct {
	URL     string    `json:"url"`
	Status  *int      `json:"status"`
	Links   *[]string `json:"links"`
	Depth   *int      `json:"depth"`
	Blocked string    `json:"blocked"`
	Error   string    `json:"error"`
	Sitemap bool      `json:"sitemap"`
}

// decodeCrawl decodes crawl's stdout, one JSON object per line, with every
// required field present.
func decodeCrawl(t *testing.T, stdout string) map[string]crawlLine {
	t.Helper()
	out := make(map[string]crawlLine)
	sc := bufio.NewScanner(strings.NewReader(stdout))
	for sc.Scan() {
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		var l crawlLine
		if err := dec.Decode(&l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if l.URL == "" || l.Status == nil || l.Links == nil || l.Depth == nil {
			t.Fatalf("line %q lacks url, status, links or depth", sc.Text())
		}
		if _, dup := out[l.URL]; dup {
			t.Fatalf("URL %s reported twice", l.URL)
		}
		out[l.URL] = l
	}
	return out
}

func TestCrawl(t *testing.T) {
	other := newTestSite(t, "", map[string]http.HandlerFunc{"/": htmlPage("/elsewhere")})
	site := newTestSite(t, "User-agent: *\nDisallow: /private/\n", map[string]http.HandlerFunc{
		"/": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<html><head><link rel="canonical" href="/home"><link rel="stylesheet" href="/s.css"></head>
<body><img src="/logo.png"><a href="/a#top">a</a> <a href="/private/x">x</a> <a href="/old">old</a>
<a href="mailto:me@example.com">mail</a> <a href="%s/">other</a></body></html>`, other.URL)
		},
		"/home": htmlPage("/"),
		"/a":    htmlPage("/b", "/a"),
		"/b":    htmlPage("/c"),
		"/c":    htmlPage("/d"),
		"/old":  http.RedirectHandler("/b", http.StatusMovedPermanently).ServeHTTP,
	})
	s := site.URL

	tests := []struct {
		name       string
		flags      []string
		wantCode   int
		want       map[string]int      // URL → status; 0 for blocked
		wantLinks  map[string][]string // URL → links, for some
		wantDepth  map[string]int
		wantOther  bool // the other site is crawled
		wantStderr string
	}{
		{
			name:     "depth 0: the seed only",
			flags:    []string{"-max-depth", "0"},
			wantCode: exitOK,
			want:     map[string]int{s + "/": 200},
			wantLinks: map[string][]string{s + "/": {
				s + "/home", s + "/a", s + "/private/x", s + "/old", other.URL + "/",
			}},
		},
		{
			name:     "depth 1",
			flags:    []string{"-max-depth", "1"},
			wantCode: exitOK,
			want: map[string]int{s + "/": 200, s + "/home": 200, s + "/a": 200, s + "/private/x": 0,
				s + "/old": 301, other.URL + "/": 200},
			wantLinks: map[string][]string{s + "/old": {s + "/b"}, s + "/private/x": {}},
			wantDepth: map[string]int{s + "/": 0, s + "/a": 1},
			wantOther: true,
		},
		{
			name:     "same host",
			flags:    []string{"-max-depth", "5", "-same-host"},
			wantCode: exitOK,
			want: map[string]int{s + "/": 200, s + "/home": 200, s + "/a": 200, s + "/private/x": 0,
				s + "/old": 301, s + "/b": 200, s + "/c": 200, s + "/d": 404},
			wantDepth: map[string]int{s + "/b": 2, s + "/d": 4},
		},
		{
			name:     "max pages",
			flags:    []string{"-max-pages", "4", "-same-host"},
			wantCode: exitOK,
			// The blocked URL costs no request, so it does not count.
			want: map[string]int{s + "/": 200, s + "/home": 200, s + "/a": 200, s + "/private/x": 0, s + "/old": 301},
		},
		{
			name:       "table on stderr",
			flags:      []string{"-max-depth", "1", "-same-host"},
			wantCode:   exitOK,
			want:       map[string]int{s + "/": 200, s + "/home": 200, s + "/a": 200, s + "/private/x": 0, s + "/old": 301},
			wantStderr: "host       requests  blocked  robots.txt  crawl-delay  pace  min gap  mean gap  backoffs  retry-after\n127.0.0.1  5         1        200         none         0     ",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			otherBefore := other.hit("/")
			args := append(append([]string{"crawl", "-delay", "0"}, tt.flags...), s+"/")
			code, stdout, stderr := runCmd(t, args...)
			if code != tt.wantCode {
				t.Fatalf("exit status = %d; want %d\nstderr:\n%s", code, tt.wantCode, stderr)
			}
			got := decodeCrawl(t, stdout)
			gotStatus := make(map[string]int)
			for u, l := range got {
				gotStatus[u] = *l.Status
				if (*l.Status == 0) != (l.Blocked != "") {
					t.Errorf("%s: status %d with blocked %q", u, *l.Status, l.Blocked)
				}
			}
			if !equalMaps(gotStatus, tt.want) {
				t.Errorf("crawled %v;\nwant %v", gotStatus, tt.want)
			}
			for u, want := range tt.wantLinks {
				if l := got[u]; !slices.Equal(*l.Links, want) {
					t.Errorf("links of %s = %q; want %q", u, *l.Links, want)
				}
			}
			for u, want := range tt.wantDepth {
				if l := got[u]; *l.Depth != want {
					t.Errorf("depth of %s = %d; want %d", u, *l.Depth, want)
				}
			}
			if b := got[s+"/private/x"]; b.URL != "" && b.Blocked != "Disallow: /private/" {
				t.Errorf("blocked = %q; want %q", b.Blocked, "Disallow: /private/")
			}
			if crawled := other.hit("/") > otherBefore; crawled != tt.wantOther {
				t.Errorf("other site crawled = %v; want %v", crawled, tt.wantOther)
			}
			if !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("stderr = %q; want it to contain %q", stderr, tt.wantStderr)
			}
		})
	}
	// Nothing disallowed, and nothing but anchors and canonical links, was
	// ever requested.
	for _, uri := range []string{"/private/x", "/logo.png", "/s.css"} {
		if n := site.hit(uri); n != 0 {
			t.Errorf("the site saw %d requests for %s; want 0", n, uri)
		}
	}
}

func TestCrawlIdleTimeout(t *testing.T) {
	site := newTestSite(t, "", map[string]http.HandlerFunc{
		"/": htmlPage("/slow"),
		"/slow": func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done() // answers only when the client gives up
		},
	})
	code, stdout, stderr := runCmd(t, "crawl", "-delay", "0", "-idle-timeout", "100ms", site.URL+"/")
	if code != exitOK {
		t.Fatalf("exit status = %d; want 0\nstderr:\n%s", code, stderr)
	}
	if got := decodeCrawl(t, stdout); len(got) != 1 || *got[site.URL+"/"].Status != 200 {
		t.Errorf("records = %v; want only the seed", got)
	}
	if want := "stopped when no request had started or ended for 100ms"; !strings.Contains(stderr, want) {
		t.Errorf("stderr = %q; want it to contain %q", stderr, want)
	}
}

// TestCrawlExitStatus checks that a crawl that fetched a URL it was given
// exits with 0, whatever it found after it; and that one that fetched
// none exits with 1 when robots.txt refused them, and 2 when a request
// failed.
func TestCrawlExitStatus(t *testing.T) {
	site := newTestSite(t, "User-agent: *\nDisallow: /private/\n", map[string]http.HandlerFunc{
		"/fine":    htmlPage("/b"),
		"/b":       htmlPage(),
		"/broken":  htmlPage("/missing", "/busy"),
		"/busy":    func(w http.ResponseWriter, r *http.Request) { http.Error(w, "busy", http.StatusInternalServerError) },
		"/refused": htmlPage("/b", "/private/x"),
		"/fails":   htmlPage("/b", "/hangup"),
		"/both":    htmlPage("/private/x", "/hangup"),
		"/hangup":  hangUp,
	})
	tests := []struct {
		seeds      []string
		wantCode   int
		wantStderr string
	}{
		{[]string{"/fine"}, exitOK, "3 requests, 0 refused by robots.txt, in "},
		{[]string{"/broken"}, exitOK, "4 requests, 0 refused by robots.txt, in "}, // a 404 and a 500 are answers
		{[]string{"/refused"}, exitOK, "3 requests, 1 refused by robots.txt, in "},
		{[]string{"/fails"}, exitOK, ", 0 refused by robots.txt, 1 failed, in "},
		{[]string{"/both"}, exitOK, ", 1 refused by robots.txt, 1 failed, in "},
		{[]string{"/busy"}, exitOK, "2 requests, 0 refused by robots.txt, in "}, // a 500 is an answer
		{[]string{"/private/x", "/b"}, exitOK, "2 requests, 1 refused by robots.txt, in "},
		{[]string{"/private/x"}, exitBlocked, "1 requests, 1 refused by robots.txt, in "},
		{[]string{"/hangup"}, exitError, ", 0 refused by robots.txt, 1 failed, in "},
		{[]string{"/private/x", "/hangup"}, exitError, ", 1 refused by robots.txt, 1 failed, in "},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.seeds, " "), func(t *testing.T) {
			args := []string{"crawl", "-delay", "0", "-retries", "0", "-max-depth", "1"}
			for _, s := range tt.seeds {
				args = append(args, site.URL+s)
			}
			code, _, stderr := runCmd(t, args...)
			if code != tt.wantCode {
				t.Errorf("exit status = %d; want %d\nstderr:\n%s", code, tt.wantCode, stderr)
			}
			if !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("stderr = %q; want it to contain %q", stderr, tt.wantStderr)
			}
			if said := strings.Contains(stderr, "polite crawl: no URL given could be fetched\n"); said != (tt.wantCode != exitOK) {
				t.Errorf("stderr = %q; want it to say that no URL given could be fetched: %v", stderr, tt.wantCode != exitOK)
			}
		})
	}
}

func TestCrawlUsage(t *testing.T) {
	tests := []struct {
		args      []string
		wantErr   string
		wantUsage bool // a malformed command line, rather than a value that is wrong
	}{
		{nil, "no URL given", true},
		{[]string{"-max-pages", "0", "http://x/"}, "-max-pages must be at least 1", false},
		{[]string{"-max-depth", "-1", "http://x/"}, "-max-depth must not be negative", false},
		{[]string{"-concurrency", "0", "http://x/"}, "-concurrency must be at least 1", false},
		{[]string{"-idle-timeout", "-1s", "http://x/"}, "-idle-timeout must not be negative", false},
		{[]string{"-retries", "-1", "http://x/"}, "-retries must not be negative", false},
		{[]string{"-retries", "x", "http://x/"}, `invalid value "x" for flag -retries`, false},
		{[]string{"mailto:x@example.com"}, "not an absolute http or https URL", false},
	}
	for _, tt := range tests {
		t.Run(tt.wantErr, func(t *testing.T) {
			code, stdout, stderr := runCmd(t, append([]string{"crawl"}, tt.args...)...)
			if code != exitError || stdout != "" || !strings.Contains(stderr, tt.wantErr) {
				t.Errorf("exit status %d, stdout %q, stderr %q; want 2, nothing, and %q", code, stdout, stderr, tt.wantErr)
			}
			if got := strings.Contains(stderr, "Usage:"); got != tt.wantUsage {
				t.Errorf("stderr %q; want the usage: %v", stderr, tt.wantUsage)
			}
		})
	}
}

// fakeWeb is a RoundTripper serving canned answers, which records the
// requests in flight per host.
type fakeWeb struct {
	mu          sync.Mutex
	answers     map[string][]int // URL → statuses to give in turn; the last repeats
	pages       map[string][]string
	inFlight    map[string]int
	maxInFlight int // the most requests in flight to one host at once
	requests    []string
}

func (f *fakeWeb) RoundTrip(req *http.Request) (*http.Response, error) {
	u := req.URL.String()
	f.mu.Lock()
	f.requests = append(f.requests, u)
	f.inFlight[req.URL.Host]++
	f.maxInFlight = max(f.maxInFlight, f.inFlight[req.URL.Host])
	status := http.StatusNotFound
	if a := f.answers[u]; len(a) > 0 {
		status = a[0]
		if len(a) > 1 {
			f.answers[u] = a[1:]
		}
	}
	f.mu.Unlock()
	time.Sleep(time.Millisecond) // let requests overlap, if the crawler allowed it
	f.mu.Lock()
	f.inFlight[req.URL.Host]--
	f.mu.Unlock()
	var body strings.Builder
	for _, l := range f.pages[u] {
		fmt.Fprintf(&body, `<a href="%s">x</a>`, l)
	}
	return &http.Response{
		StatusCode: status,
		Header:     http.Header{"Content-Type": {"text/html"}},
		Body:       io.NopCloser(strings.NewReader(body.String())),
		Request:    req,
	}, nil
}

func TestCrawlerRetriesAndHosts(t *testing.T) {
	tests := []struct {
		name        string
		retries     int
		wantStatus  []string // "URL status" per record, in order for the busy URL
		wantBusyReq int
	}{
		{"no retry", 0, []string{"503"}, 1},
		{"one retry", 1, []string{"503", "200"}, 2},
		{"retries run out", 1, []string{"429", "503"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			answers := map[string][]int{"http://a/": {200}, "http://b/": {200}, "http://a/1": {200}, "http://a/2": {200}}
			switch tt.name {
			case "retries run out":
				answers["http://b/busy"] = []int{429, 503, 200}
			default:
				answers["http://b/busy"] = []int{503, 200}
			}
			web := &fakeWeb{
				answers:  answers,
				inFlight: make(map[string]int),
				pages: map[string][]string{
					"http://a/": {"/1", "/2", "http://b/busy"},
					"http://b/": {"/busy", "http://a/1"},
				},
			}
			var mu sync.Mutex
			var busy []string
			n := 0
			c := newCrawler(web, crawlOptions{maxPages: 100, maxDepth: 3, concurrency: 4, retries: tt.retries}, func(r pageRecord) {
				mu.Lock()
				defer mu.Unlock()
				n++
				if r.URL == "http://b/busy" {
					busy = append(busy, fmt.Sprint(r.Status))
				}
			})
			seeds := []*url.URL{mustParse(t, "http://a/"), mustParse(t, "http://b/")}
			if idle := c.run(context.Background(), seeds); idle {
				t.Error("run stopped on the idle timeout")
			}
			if !slices.Equal(busy, tt.wantStatus) {
				t.Errorf("records of /busy: %v; want %v", busy, tt.wantStatus)
			}
			if got := slices.Index(web.requests, "http://b/busy"); got < 0 {
				t.Errorf("/busy was never requested")
			}
			if n != 4+len(tt.wantStatus) {
				t.Errorf("%d records; want %d", n, 4+len(tt.wantStatus))
			}
			if web.maxInFlight != 1 {
				t.Errorf("up to %d requests in flight to one host; want 1", web.maxInFlight)
			}
		})
	}
}

func mustParse(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func equalMaps[K comparable, V comparable](a, b map[K]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
