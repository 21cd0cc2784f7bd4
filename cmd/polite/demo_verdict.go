package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/polite-go/polite/cmd/polite/internal/backoff"
	"github.com/polite-go/polite/cmd/polite/internal/human"
)

// A verdictLine is one claim of the demo's verdict and the evidence for or
// against it.
type verdictLine struct {
	ok       bool
	claim    string
	evidence string
}

// evidence is what the verdict judges: the servers' own records, the wire
// as the recording base saw it, and the crawl's records.
type evidence struct {
	sites       []*demoSite
	siteOf      func(host string) *demoSite // by pacing key; nil when unknown
	arrivals    []arrival                   // server side, in order of arrival
	retryAfters []sentRetryAfter            // server side
	records     []pageRecord
	wire        []wireRequest
	floor       func(r wireRequest) time.Duration // the least gap the policy allows before r
	slow        time.Duration                     // the slow pages' answer time
}

// judge checks that the crawl was polite. Each claim is checked against
// what really happened, and fails when there is nothing to check it with.
func judge(ev evidence) []verdictLine {
	return []verdictLine{
		judgeDisallowed(ev),
		judgeGaps(ev),
		judgeRetryAfter(ev),
		judgeAdaptation(ev),
		judgeRecovery(ev),
	}
}

// judgeDisallowed: no URL that robots.txt disallows reached a server, as
// counted by the servers and by the wire; and every URL the transport
// refused was in fact disallowed.
func judgeDisallowed(ev evidence) verdictLine {
	v := verdictLine{claim: "no disallowed URL was requested"}
	var serverHits, wireHits, wrongRefusals []string
	refused := make(map[*demoSite]int)
	nRefused := 0
	for _, a := range ev.arrivals {
		if a.site != nil && a.site.disallowed(a.uri) {
			serverHits = append(serverHits, a.site.name+a.uri)
		}
	}
	for _, r := range ev.wire {
		if s, uri := ev.siteOf(r.Host), pathOf(r.URL); s != nil && s.disallowed(uri) {
			wireHits = append(wireHits, s.name+uri)
		}
	}
	for _, rec := range ev.records {
		if rec.Blocked == "" {
			continue
		}
		s, uri := ev.siteOf(rec.Host), pathOf(rec.URL)
		if s == nil || !s.disallowed(uri) {
			wrongRefusals = append(wrongRefusals, rec.URL)
			continue
		}
		refused[s]++
		nRefused++
	}
	switch {
	case len(serverHits) > 0 || len(wireHits) > 0:
		v.evidence = fmt.Sprintf("disallowed URLs were requested; the servers saw %d: %s; the wire saw %d: %s",
			len(serverHits), list(serverHits, ", "), len(wireHits), list(wireHits, ", "))
	case len(wrongRefusals) > 0:
		v.evidence = "URLs that robots.txt allows were refused: " + list(wrongRefusals, ", ")
	case nRefused == 0:
		v.evidence = "no disallowed link was met, so nothing was tested"
	default:
		v.ok = true
		var per []string
		for _, s := range ev.sites {
			per = append(per, fmt.Sprintf("%s %d", s.name, refused[s]))
		}
		v.evidence = fmt.Sprintf("%d links to disallowed URLs were refused before the wire (%s); the servers saw none of them",
			nRefused, strings.Join(per, ", "))
	}
	return v
}

// judgeGaps: every gap between two starts to a host, on the wire, was at
// least the pace the policy makes a minimum, max(base delay, Crawl-delay),
// with the Crawl-delay the demo wrote, not the one the transport read.
func judgeGaps(ev evidence) verdictLine {
	v := verdictLine{claim: "no gap was shorter than its pace"}
	var tooShort []string
	n := 0
	var closest gap
	last := make(map[string]wireRequest)
	for _, r := range ev.wire {
		prev, ok := last[r.Host]
		last[r.Host] = r
		if !ok {
			continue
		}
		g := gap{Len: r.Start.Sub(prev.Start), Floor: ev.floor(r), After: prev, Next: r}
		n++
		if g.Len < g.Floor {
			tooShort = append(tooShort, fmt.Sprintf("%s %s after %s: %s < %s", r.Host, pathOf(r.URL), pathOf(prev.URL), g.Len, g.Floor))
		}
		if n == 1 || g.Len-g.Floor < closest.Len-closest.Floor {
			closest = g
		}
	}
	switch {
	case len(tooShort) > 0:
		v.evidence = "too short: " + list(tooShort, "; ")
	case n == 0:
		v.evidence = "no two requests went to one host, so nothing was tested"
	default:
		v.ok = true
		var paces []string
		for _, s := range ev.sites {
			paces = append(paces, fmt.Sprintf("%s %s", s.name, human.Duration(ev.floor(wireRequest{Host: s.ip, URL: "http://" + s.ip + "/"}))))
		}
		v.evidence = fmt.Sprintf("%d gaps measured on the wire against paces of %s; the closest: %s for %s on %s",
			n, strings.Join(paces, ", "), closest.Len.Round(time.Microsecond), human.Duration(closest.Floor), closest.Next.Host)
	}
	return v
}

// judgeRetryAfter: after every Retry-After a server sent, the next request
// to that host arrived, by the server's clock, no sooner than it asked.
func judgeRetryAfter(ev evidence) verdictLine {
	v := verdictLine{claim: "every Retry-After was waited out"}
	if len(ev.retryAfters) == 0 {
		v.evidence = "no server sent a Retry-After, so nothing was tested"
		return v
	}
	v.ok = true
	var parts []string
	for _, ra := range ev.retryAfters {
		var next *arrival
		for i, a := range ev.arrivals {
			if a.site == ra.site && a.at.After(ra.at) {
				next = &ev.arrivals[i]
				break
			}
		}
		if next == nil {
			parts = append(parts, fmt.Sprintf("%s %s: %d asked %s, and nothing followed", ra.site.name, ra.uri, ra.status, ra.retryAfter))
			continue
		}
		waited := next.at.Sub(ra.at)
		note := ""
		switch {
		case waited < ra.retryAfter:
			v.ok = false
			note = ": TOO SOON"
		case waited > ra.retryAfter+time.Second:
			note = " (the backoff pause was longer)"
		}
		parts = append(parts, fmt.Sprintf("%s %s: %d asked %s, the next request came %.3fs later%s",
			ra.site.name, ra.uri, ra.status, ra.retryAfter, waited.Seconds(), note))
	}
	v.evidence = strings.Join(parts, "; ")
	return v
}

// judgeAdaptation: after every slow answer, the next start to its host came
// at least twice the answer's time later, as the latency term of the pace
// asks (one request in flight per host, so the answer was known in time).
func judgeAdaptation(ev evidence) verdictLine {
	v := verdictLine{claim: "the pace adapted to slow pages"}
	next := nextStarts(ev.wire)
	var bad []string
	n := 0
	minRatio := 0.0
	for i, r := range ev.wire {
		if r.Err != "" || r.Latency() < ev.slow || next[i] < 0 {
			continue
		}
		n++
		g := ev.wire[next[i]].Start.Sub(r.Start)
		ratio := float64(g) / float64(r.Latency())
		if n == 1 || ratio < minRatio {
			minRatio = ratio
		}
		if g < 2*r.Latency() {
			bad = append(bad, fmt.Sprintf("%s %s took %s, the next start came %s after it", r.Host, pathOf(r.URL), r.Latency(), g))
		}
	}
	switch {
	case len(bad) > 0:
		v.evidence = list(bad, "; ")
	case n == 0:
		v.evidence = "no slow answer was followed by a request, so nothing was tested"
	default:
		v.ok = true
		v.evidence = fmt.Sprintf("%d answers took %s or more; each next start came at least %.2f× the answer's time later (2× asked)", n, ev.slow, minRatio)
	}
	return v
}

// judgeRecovery: the robots.txt that answered 503 was fetched again within
// the run, answered 200, and its rules then refused URLs.
func judgeRecovery(ev evidence) verdictLine {
	v := verdictLine{claim: "the robots.txt that answered 503 recovered"}
	for _, s := range ev.sites {
		var statuses []int
		var failedAt, recoveredAt time.Time
		for _, r := range ev.wire {
			if !r.Robots || ev.siteOf(r.Host) != s {
				continue
			}
			statuses = append(statuses, r.Status)
			switch {
			case backoff.Status(r.Status) && failedAt.IsZero():
				failedAt = r.End
			case r.Status == 200 && !failedAt.IsZero() && recoveredAt.IsZero():
				recoveredAt = r.Start
			}
		}
		if failedAt.IsZero() {
			continue
		}
		refused := 0
		for _, rec := range ev.records {
			if rec.Blocked != "" && ev.siteOf(rec.Host) == s && rec.At.After(recoveredAt) && !recoveredAt.IsZero() {
				refused++
			}
		}
		if recoveredAt.IsZero() || refused == 0 {
			v.evidence = fmt.Sprintf("%s's robots.txt answered %v and its rules refused %d URLs", s.name, statuses, refused)
			return v
		}
		v.ok = true
		v.evidence = fmt.Sprintf("%s's robots.txt answered %d, was fetched again %.3fs later and answered 200; its rules then refused %d URLs",
			s.name, statuses[0], recoveredAt.Sub(failedAt).Seconds(), refused)
		return v
	}
	v.evidence = "no robots.txt answered 503, so nothing was tested"
	return v
}

// writeVerdict prints the verdict and reports whether every claim holds.
func writeVerdict(w io.Writer, lines []verdictLine) bool {
	all := true
	fmt.Fprintln(w, "verdict:")
	for _, l := range lines {
		mark := "ok  "
		if !l.ok {
			mark, all = "FAIL", false
		}
		fmt.Fprintf(w, "  %s  %s\n", mark, l.claim)
		fmt.Fprintf(w, "        %s\n", l.evidence)
	}
	return all
}

// siteFinder returns a lookup of sites by pacing key.
func siteFinder(sites []*demoSite) func(host string) *demoSite {
	return func(host string) *demoSite {
		for _, s := range sites {
			if s.ip == host {
				return s
			}
		}
		return nil
	}
}

// list joins the first few items with sep, and says how many more there are.
func list(items []string, sep string) string {
	const few = 5
	if len(items) <= few {
		return strings.Join(items, sep)
	}
	return fmt.Sprintf("%s%sand %d more", strings.Join(items[:few], sep), sep, len(items)-few)
}
