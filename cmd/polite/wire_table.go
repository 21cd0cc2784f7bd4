package main

import (
	"cmp"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/cmd/polite/internal/human"
)

// paceFloor is the pacing the transport was built with: what makes the
// least gap a host may see between two request starts.
type paceFloor struct {
	base          time.Duration // pace.Policy.BaseDelay
	maxCrawlDelay time.Duration // pace.Policy.MaxCrawlDelay
}

// of returns the least gap before a request with Crawl-delay crawlDelay:
// max(base delay, clamped Crawl-delay). Jitter, latency and backoff only
// add to it.
func (f paceFloor) of(crawlDelay time.Duration) time.Duration {
	return max(f.base, min(crawlDelay, f.maxCrawlDelay))
}

// A hostReport is one host's line of the table: what went on the wire,
// measured by the recorder, next to what the transport says it knows.
type hostReport struct {
	Host        string
	Requests    int           // on the wire, robots.txt fetches included
	Blocked     uint64        // refused by robots.txt
	Robots      string        // robots.txt statuses in order, as "503→200"
	CrawlDelay  time.Duration // the largest Crawl-delay of the host's origins, before clamping
	Pace        time.Duration // least gap: max(base delay, clamped Crawl-delay)
	Gaps        []gap         // between consecutive starts
	Backoffs    uint64
	RetryAfters []retryWait // Retry-After answers and what followed them
}

// A gap is the time between two consecutive request starts to a host.
type gap struct {
	Len   time.Duration
	Floor time.Duration // the least the transport's policy allows before the second request
	After wireRequest   // the first request
	Next  wireRequest   // the second request
}

// A retryWait is a Retry-After answer and the next start to its host.
type retryWait struct {
	Req    wireRequest
	Waited time.Duration // from the answer to the next start; -1 when none followed
}

// Honoured reports whether the next start waited out the Retry-After.
func (w retryWait) Honoured() bool { return w.Waited < 0 || w.Waited >= w.Req.RetryAfter }

// MinGap returns the shortest gap, or 0 with none.
func (r hostReport) MinGap() time.Duration {
	if len(r.Gaps) == 0 {
		return 0
	}
	return slices.MinFunc(r.Gaps, func(a, b gap) int { return cmp.Compare(a.Len, b.Len) }).Len
}

// MeanGap returns the mean gap, or 0 with none.
func (r hostReport) MeanGap() time.Duration {
	if len(r.Gaps) == 0 {
		return 0
	}
	var sum time.Duration
	for _, g := range r.Gaps {
		sum += g.Len
	}
	return sum / time.Duration(len(r.Gaps))
}

// buildReport puts together the wire log and the transport's stats, one
// report per host that either knows of, ordered by host name.
func buildReport(wire []wireRequest, stats []polite.HostStats, floor paceFloor) []hostReport {
	byHost := make(map[string][]wireRequest)
	statsOf := make(map[string]polite.HostStats)
	var hosts []string
	for _, r := range wire {
		if _, ok := byHost[r.Host]; !ok {
			hosts = append(hosts, r.Host)
		}
		byHost[r.Host] = append(byHost[r.Host], r)
	}
	for _, s := range stats {
		if _, ok := byHost[s.Key]; !ok {
			hosts = append(hosts, s.Key)
		}
		statsOf[s.Key] = s
	}
	slices.Sort(hosts)
	reports := make([]hostReport, 0, len(hosts))
	for _, host := range hosts {
		s := statsOf[host] // zero when the transport does not know the host
		rep := hostReport{Host: host, Blocked: s.Refused, Backoffs: s.Backoffs}
		delays := make(map[string]time.Duration) // Crawl-delay by robots.txt URL
		for _, rs := range s.Robots {
			delays[rs.URL] = rs.CrawlDelay
			rep.CrawlDelay = max(rep.CrawlDelay, rs.CrawlDelay)
		}
		rep.Pace = floor.of(rep.CrawlDelay)

		reqs := byHost[host]
		rep.Requests = len(reqs)
		var statuses []string
		for i, r := range reqs {
			if r.Robots {
				st := strconv.Itoa(r.Status)
				if r.Err != "" {
					st = "error"
				}
				if len(statuses) == 0 || statuses[len(statuses)-1] != st {
					statuses = append(statuses, st)
				}
			}
			if i > 0 {
				// A robots.txt fetch may follow a failed one, or a redirect,
				// with no Crawl-delay known: only the base delay binds it.
				f := floor.base
				if !r.Robots {
					f = floor.of(delays[robotsURLOf(r.URL)])
				}
				rep.Gaps = append(rep.Gaps, gap{Len: r.Start.Sub(reqs[i-1].Start), Floor: f, After: reqs[i-1], Next: r})
			}
			if r.RetryAfter > 0 {
				w := retryWait{Req: r, Waited: -1}
				if i+1 < len(reqs) {
					w.Waited = reqs[i+1].Start.Sub(r.End)
				}
				rep.RetryAfters = append(rep.RetryAfters, w)
			}
		}
		rep.Robots = strings.Join(statuses, "→")
		if rep.Robots == "" {
			rep.Robots = "-"
		}
		reports = append(reports, rep)
	}
	return reports
}

// robotsURLOf returns the robots.txt URL of rawURL's origin in the form the
// transport reports it, as fetched: "scheme://host/robots.txt", with the
// port only when it is not the scheme's default.
func robotsURLOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port := u.Port(); port != "" && !(scheme == "http" && port == "80" || scheme == "https" && port == "443") {
		host += ":" + port
	}
	return scheme + "://" + host + "/robots.txt"
}

// writeTable writes one line per host: requests on the wire, refusals by
// robots.txt, robots.txt statuses, Crawl-delay, the pace against the least
// and mean gaps between starts, backoffs, and Retry-After waits honoured.
func writeTable(w io.Writer, reports []hostReport) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "host\trequests\tblocked\trobots.txt\tcrawl-delay\tpace\tmin gap\tmean gap\tbackoffs\tretry-after")
	for _, r := range reports {
		minGap, meanGap := "-", "-"
		if len(r.Gaps) > 0 {
			minGap, meanGap = human.Duration(r.MinGap()), human.Duration(r.MeanGap())
		}
		retry := "-"
		if n := len(r.RetryAfters); n > 0 {
			honoured := 0
			for _, ra := range r.RetryAfters {
				if ra.Honoured() {
					honoured++
				}
			}
			retry = fmt.Sprintf("%d/%d waited", honoured, n)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", r.Host, r.Requests, r.Blocked, r.Robots,
			durationOrNone(r.CrawlDelay), human.Duration(r.Pace), minGap, meanGap, r.Backoffs, retry)
	}
	tw.Flush()
}
