// Package audittest writes access logs whose violations are known by
// construction, for the tests of package audit and of polite audit: two
// hours of six crawlers and a browser on three hosts, each crawler keeping
// or breaking robots.txt, its Crawl-delay and the pauses of 429s and 503s
// in its own known ways, with a robots.txt that changes after the first
// hour, and lines that are no request at all.
package audittest

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The robots.txt files of the generated logs: RobotsV2 replaces
// RobotsV1 at Switch, freeing BadBot's pages but /private/, and
// closing /tmp/ to the "*" group.
const (
	RobotsV1 = `User-agent: *
Disallow: /private/
Crawl-delay: 2

User-agent: GoodBot
Disallow: /private/
Allow: /private/press/
Crawl-delay: 5

User-agent: BadBot
Disallow: /
`
	RobotsV2 = `User-agent: *
Disallow: /private/
Disallow: /tmp/
Crawl-delay: 2

User-agent: GoodBot
Disallow: /private/
Allow: /private/press/
Crawl-delay: 5

User-agent: BadBot
Disallow: /private/
`
)

// The generated logs start at Start, and last Span; the second
// robots.txt is in force from Switch.
var (
	Start  = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	Switch = Start.Add(time.Hour)
	Span   = 2 * time.Hour
)

// The kinds of violation, as the JSON report names them.
const (
	disallowed = "disallowed"
	tooSoon    = "too_soon"
	inPause    = "in_pause"
)

// The User-Agents of the generated crawlers.
const (
	uaGood    = "Mozilla/5.0 (compatible; GoodBot/1.0; +https://good.example/bot)"
	uaBad     = "BadBot/2.0"
	uaFast    = "Mozilla/5.0 (compatible; FastBot/0.1; +http://fast.example/)"
	uaPause   = "pausebot/1.0"
	uaGoogle  = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
	uaCurl    = "curl/8.5.0"
	uaFirefox = "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0"
)

// An Event is a request of a generated log, and the violations it is
// known to be, by construction. Its time is on the millisecond, so that
// JSON lines give it exactly; the Common Log Format cuts it to the second.
type Event struct {
	at     time.Time
	host   string
	ua     string
	target string
	status int
	want   []string      // the kinds of violation it is, as the JSON report names them
	took   time.Duration // from its start to its answer's end
}

// slowest is the longest an answer of the generated logs takes.
const slowest = 3200 * time.Millisecond

// A Line is a line of a generated log: a request, or text that is no
// request at all, which the audit must count and show by its number.
type Line struct {
	ev      *Event
	garbage string
}

// script makes the requests of every generated crawler, each of which
// breaks the rules in its own known ways. Gaps and pauses that break a
// rule fall short of it by at least a second, the Common Log Format's
// precision, and those that keep it keep it fully, so that the
// violations are the same at any precision.
func script() []Event {
	var evs []Event
	add := func(at time.Time, host, ua, target string, status int, want ...string) {
		evs = append(evs, Event{at.Truncate(time.Millisecond), host, ua, target, status, want, 0})
	}
	after := func(at time.Time) bool { return !at.Before(Switch) }
	end := Start.Add(Span)

	// GoodBot keeps every rule: Crawl-delay 5 on each of two hosts, which
	// it alternates every 3s; it waits out every 503, fetches robots.txt
	// every 20 minutes, and reads /private/press/, which is allowed.
	i := 0
	for t := Start.Add(137 * time.Millisecond); t.Before(end); t = t.Add(3 * time.Second) {
		host := []string{"a.example", "B.Example:443"}[i%2]
		switch {
		case i%800 < 2:
			add(t, host, uaGood, "/robots.txt", 200)
		case i%97 == 5:
			add(t, host, uaGood, "/busy", 503)
			t = t.Add(4 * time.Second) // and 6s on its host, past the pause of 5s
		case i%3 == 0:
			add(t, host, uaGood, "/private/press/kit?i="+fmt.Sprint(i), 200)
		default:
			add(t, host, uaGood, "/page/"+fmt.Sprint(i), 200)
		}
		i++
	}

	// BadBot, with no Crawl-delay, fetches / and /private/ every 10s:
	// everything is disallowed to it until the switch, /private/ after.
	for t := Start.Add(4500 * time.Millisecond); t.Before(end); t = t.Add(10 * time.Second) {
		add(t, "a.example", uaBad, "/robots.txt", 200)
		t = t.Add(3 * time.Second)
		add(t, "a.example", uaBad, "/private/x", 200, disallowed)
		t = t.Add(3 * time.Second)
		if after(t) {
			add(t, "a.example", uaBad, "/a%7Eb", 200)
		} else {
			add(t, "a.example", uaBad, "/a%7Eb", 200, disallowed)
		}
	}

	// FastBot, of the "*" group and its Crawl-delay of 2s, comes too soon
	// twice in each round of five requests; from the switch, /tmp/ is
	// closed to it. Its second page is slow: its answer ends after the
	// third request's.
	for t := Start.Add(20 * time.Second); t.Before(end); t = t.Add(10 * time.Second) {
		add(t, "a.example", uaFast, "/list?page=1", 200)
		add(t.Add(300*time.Millisecond), "a.example", uaFast, "/list?page=2", 200, tooSoon)
		evs[len(evs)-1].took = slowest
		if tt := t.Add(3300 * time.Millisecond); after(tt) {
			add(tt, "a.example", uaFast, "/tmp/cache", 200, disallowed)
		} else {
			add(tt, "a.example", uaFast, "/tmp/cache", 200)
		}
		add(t.Add(4300*time.Millisecond), "a.example", uaFast, "/list?page=3", 404, tooSoon)
		add(t.Add(7*time.Second), "a.example", uaFast, "/list?page=4", 200)
	}

	// pausebot keeps the Crawl-delay of 2s but not the pauses: after a
	// 429 it comes back in 2.5s, gets a 503, which makes the pause go on,
	// and comes back 2.5s later still; then it waits out a 429.
	for t := Start.Add(31 * time.Second); t.Before(end); t = t.Add(60 * time.Second) {
		add(t, "b.example", uaPause, "/feed", 429)
		add(t.Add(2500*time.Millisecond), "b.example", uaPause, "/feed", 503, inPause)
		add(t.Add(5*time.Second), "b.example", uaPause, "/feed", 200, inPause)
		add(t.Add(12*time.Second), "b.example", uaPause, "/feed?again", 429)
		add(t.Add(18*time.Second), "b.example", uaPause, "/feed?later", 200)
	}

	// Googlebot, of the "*" group, keeps to its Crawl-delay of 2s exactly.
	for t := Start.Add(45 * time.Second); t.Before(end); t = t.Add(2 * time.Second) {
		add(t, "a.example", uaGoogle, "/news/"+fmt.Sprint(t.Unix()%1000), 200)
	}

	// curl reads /private/ once an hour, and a person with Firefox reads
	// everything, fast: robots.txt does not bind people.
	for t := Start.Add(90 * time.Second); t.Before(end); t = t.Add(time.Hour) {
		add(t, "a.example", uaCurl, "/private/report.pdf", 200, disallowed)
	}
	for t := Start.Add(7 * time.Second); t.Before(end); t = t.Add(700 * time.Millisecond) {
		add(t, "a.example", uaFirefox, "/private/x", 200)
	}

	slices.SortStableFunc(evs, func(a, b Event) int { return a.at.Compare(b.at) })
	for i := range evs {
		// Answers of up to half a second, which move no answer's end
		// across a pause's bound: a pause that breaks a rule falls short
		// of it by a second or more.
		if evs[i].took == 0 {
			evs[i].took = time.Duration(i*7919%499) * time.Millisecond
		}
	}
	evs[0].took = slowest // so that the first line, as answers end, shows how long an answer may take
	return evs
}

// garbage are lines that are no request, each given as a line of
// either format would spoil it.
var garbage = []string{
	"garbage",
	`a.example 1.2.3.4 - - [32/Mar/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 5 "-" "x"`,
	`a.example 1.2.3.4 - - [01/Mar/2026:10:00:00 +0000] GET / HTTP/1.1 200 5`,
	`{"time":"2026-03-01T10:00:00Z","request":"GET / HTTP/1.1"`,
	`{"request":"GET / HTTP/1.1","status":200}`,
	strings.Repeat("x", 64<<10+10), // longer than the 64 KiB a line may have
}

// Log returns the lines of the generated log: the events of every
// crawler in the order of their times, and after every 997th a line that
// is no request.
func Log() []Line { return interleave(script()) }

// interleave interleaves the events with garbage: one garbage line after
// every 997th event.
func interleave(evs []Event) []Line {
	var lines []Line
	for i := range evs {
		lines = append(lines, Line{ev: &evs[i]})
		if i%997 == 996 {
			lines = append(lines, Line{garbage: garbage[(i/997)%len(garbage)]})
		}
	}
	return lines
}

// A Format writes an event as a line of a log format: Combined or JSON.
type Format func(w io.Writer, e *Event)

// Combined writes the Combined Log Format with nginx's virtual host in
// front.
func Combined(w io.Writer, e *Event) {
	fmt.Fprintf(w, "%s 192.0.2.%d - - [%s] \"GET %s HTTP/1.1\" %d %d \"-\" %q\n",
		e.host, len(e.ua)%200, e.at.Format("02/Jan/2006:15:04:05 -0700"), e.target, e.status, 100+len(e.target), e.ua)
}

// JSON writes JSON lines as nginx's escape=json writes them.
func JSON(w io.Writer, e *Event) {
	fmt.Fprintf(w, `{"time_iso8601":%q,"remote_addr":"192.0.2.1","host":%q,"request":"GET %s HTTP/1.1","status":%d,"body_bytes_sent":%d,"http_user_agent":%q}`+"\n",
		e.at.In(time.FixedZone("", 3600)).Format("2006-01-02T15:04:05.000-07:00"), e.host, e.target, e.status, 100+len(e.target), e.ua)
}

// NginxJSON writes a JSON line as nginx's escape=json writes one when the
// answer has ended: the time ($msec) is the answer's end, and request_time
// how long the request took. ByEnd orders the lines as nginx writes them.
func NginxJSON(w io.Writer, e *Event) {
	end := e.at.Add(e.took)
	fmt.Fprintf(w, `{"msec":"%d.%03d","host":%q,"request":"GET %s HTTP/1.1","status":"%d","body_bytes_sent":"%d","http_user_agent":%q,"request_time":"%.3f"}`+"\n",
		end.Unix(), end.Nanosecond()/1e6, e.host, e.target, e.status, 100+len(e.target), e.ua, e.took.Seconds())
}

// ByEnd returns the lines in the order their answers ended rather than the
// order they started, each line that is no request after the request it
// followed.
func ByEnd(lines []Line) []Line {
	type run struct {
		end   time.Time
		lines []Line // a request and the garbage after it
	}
	var runs []run
	for _, l := range lines {
		if l.ev == nil && len(runs) > 0 {
			runs[len(runs)-1].lines = append(runs[len(runs)-1].lines, l)
			continue
		}
		runs = append(runs, run{l.ev.at.Add(l.ev.took), []Line{l}})
	}
	slices.SortStableFunc(runs, func(a, b run) int { return a.end.Compare(b.end) })
	var byEnd []Line
	for _, r := range runs {
		byEnd = append(byEnd, r.lines...)
	}
	return byEnd
}

// Write writes the lines in format, and returns the violations they
// hold, by line number.
func Write(w io.Writer, lines []Line, format Format) map[Violation]bool {
	want := make(map[Violation]bool)
	for n, l := range lines {
		if l.ev == nil {
			fmt.Fprintln(w, l.garbage)
			continue
		}
		format(w, l.ev)
		for _, k := range l.ev.want {
			want[Violation{int64(n + 1), k}] = true
		}
	}
	return want
}

// GarbageLines returns the numbers of the garbage lines.
func GarbageLines(lines []Line) []int64 {
	var ns []int64
	for n, l := range lines {
		if l.ev == nil {
			ns = append(ns, int64(n+1))
		}
	}
	return ns
}

// Ranking returns the crawlers of the lines, by name, in the order of the
// report: those that robots.txt binds by most violations, then most
// requests; then the browsers.
func Ranking(lines []Line) []string {
	counts := Counts(lines)
	requests := make(map[string]int)
	for _, l := range lines {
		if l.ev != nil {
			requests[names[l.ev.ua]]++
		}
	}
	total := func(name string) int64 {
		var n int64
		for _, k := range counts[name] {
			n += k
		}
		return n
	}
	var names []string
	for name := range counts {
		if name != Browsers {
			names = append(names, name)
		}
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(total(b), total(a)), cmp.Compare(requests[b], requests[a]), strings.Compare(a, b))
	})
	return append(names, Browsers)
}

// Browsers is the report's row of the browsers, which robots.txt does not
// bind.
const Browsers = "(browsers)"

// names are the names of the generated crawlers, by User-Agent, as the
// report names them.
var names = map[string]string{uaGood: "goodbot", uaBad: "badbot", uaFast: "fastbot", uaPause: "pausebot",
	uaGoogle: "googlebot", uaCurl: "curl", uaFirefox: Browsers}

// Counts returns the violations of each crawler of the lines, by name,
// by kind, as the JSON report names them.
func Counts(lines []Line) map[string]map[string]int64 {
	counts := make(map[string]map[string]int64)
	for _, l := range lines {
		if l.ev == nil {
			continue
		}
		name := names[l.ev.ua]
		if counts[name] == nil {
			counts[name] = map[string]int64{disallowed: 0, tooSoon: 0, inPause: 0}
		}
		for _, k := range l.ev.want {
			counts[name][k]++
		}
	}
	return counts
}

// A Violation is a line of a log and a kind of violation it holds, as the
// JSON report names the kinds: "disallowed", "too_soon" or "in_pause".
type Violation struct {
	Line int64
	Kind string
}

// Sorted returns the keys of a violation set in order, for messages.
func Sorted(m map[Violation]bool) []Violation {
	keys := make([]Violation, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b Violation) int { return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Kind, b.Kind)) })
	return keys
}

// WriteRobots writes the generated log's two robots.txt files to a new
// temporary directory of t's and returns their paths: v2 is in force from
// Switch.
func WriteRobots(t testing.TB) (v1, v2 string) {
	t.Helper()
	dir := t.TempDir()
	return WriteFile(t, dir, "robots-v1.txt", []byte(RobotsV1)), WriteFile(t, dir, "robots-v2.txt", []byte(RobotsV2))
}

// WriteFile writes data to the file name in dir and returns its path; it
// ends the test t when it cannot.
func WriteFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Gzip returns b compressed with gzip.
func Gzip(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b) // a bytes.Buffer does not fail
	zw.Close()
	return buf.Bytes()
}
