package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"math"
	"time"
)

// The report in JSON: one object. Durations are in seconds, times in RFC
// 3339, UTC. The crawlers come last, written one by one.
type jsonReport struct {
	Logs          []string       `json:"logs"`
	Robots        []jsonRobots   `json:"robots"`
	Lines         int64          `json:"lines"`
	Requests      int64          `json:"requests"`
	Unparsed      int64          `json:"unparsed"`
	UnparsedLines []jsonUnparsed `json:"unparsed_lines"`
	From          string         `json:"from,omitempty"`
	To            string         `json:"to,omitempty"`
	Pause         float64        `json:"default_pause_seconds"`
	Forgotten     int64          `json:"forgotten_pairs,omitempty"`
	Identity      string         `json:"identity"`
	Crawlers      []jsonCrawler  `json:"crawlers,omitempty"`
}

type jsonRobots struct {
	File string `json:"file"`
	From string `json:"from,omitempty"` // empty: from the start
}

type jsonUnparsed struct {
	Log    string `json:"log"`
	Line   int64  `json:"line"`
	Reason string `json:"reason"`
	Text   string `json:"text"`
}

type jsonCrawler struct {
	Crawler          string           `json:"crawler"`
	Group            string           `json:"group"`
	Judged           bool             `json:"judged"`
	UserAgent        string           `json:"user_agent"` // the first seen
	Requests         int64            `json:"requests"`
	Bytes            int64            `json:"bytes"`
	Violations       map[string]int64 `json:"violations"`
	DisallowedByRule map[string]int64 `json:"disallowed_by_rule,omitempty"`
	CrawlDelay       float64          `json:"crawl_delay_seconds"` // the largest that applied
	MinGap           *float64         `json:"min_gap_seconds,omitempty"`
	RobotsFetches    int64            `json:"robots_fetches"`
	RobotsInterval   *float64         `json:"robots_interval_seconds,omitempty"`
	Examples         []jsonViolation  `json:"examples"`
}

type jsonViolation struct {
	Kind   string `json:"kind"`
	Log    string `json:"log"`
	Line   int64  `json:"line"`
	Time   string `json:"time"`
	Host   string `json:"host"`
	Target string `json:"target"`
	Detail string `json:"detail"`
}

// WriteJSON writes the report as one JSON object, every crawler with its
// examples, a crawler at a time, so that thousands of crawlers take no
// more memory than one. Durations are in seconds, times in RFC 3339, UTC.
func (rep *Report) WriteJSON(w io.Writer) error {
	a := rep.a
	head := jsonReport{
		Logs:          rep.logs,
		Lines:         a.lines,
		Requests:      a.parsed,
		Unparsed:      a.Unparsed(),
		UnparsedLines: []jsonUnparsed{},
		Pause:         seconds(time.Duration(a.pause)),
		Forgotten:     a.forgotten,
		Identity:      identityNote,
	}
	if a.parsed > 0 {
		head.From, head.To = rfc3339(a.first), rfc3339(a.last)
	}
	for _, v := range a.versions {
		r := jsonRobots{File: v.path}
		if v.from != math.MinInt64 {
			r.From = rfc3339(v.from)
		}
		head.Robots = append(head.Robots, r)
	}
	for _, u := range a.unparsed {
		head.UnparsedLines = append(head.UnparsedLines, jsonUnparsed{u.log, u.line, u.reason, u.text})
	}

	bw := bufio.NewWriter(w)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(head); err != nil {
		return err
	}
	bw.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n}\n")))
	bw.WriteString(",\n  \"crawlers\": [")
	enc.SetIndent("    ", "  ")
	for i, c := range rep.rows {
		buf.Reset()
		if err := enc.Encode(rep.jsonCrawler(c)); err != nil {
			return err
		}
		if i > 0 {
			bw.WriteString(",")
		}
		bw.WriteString("\n    ")
		bw.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	}
	if len(rep.rows) > 0 {
		bw.WriteString("\n  ")
	}
	bw.WriteString("]\n}\n")
	return bw.Flush()
}

func (rep *Report) jsonCrawler(c *crawler) jsonCrawler {
	j := jsonCrawler{
		Crawler:       c.name,
		Group:         c.groupLabel(),
		Judged:        c.judged(),
		UserAgent:     c.firstUA,
		Requests:      c.requests,
		Bytes:         c.bytes,
		Violations:    make(map[string]int64),
		CrawlDelay:    seconds(time.Duration(c.maxDelay)),
		RobotsFetches: c.robotsFetches,
		Examples:      []jsonViolation{},
	}
	for k, n := range c.counts {
		j.Violations[rep.kindKey(k)] = n
	}
	if len(c.byRule) > 0 {
		j.DisallowedByRule = make(map[string]int64)
		for r, n := range c.byRule {
			j.DisallowedByRule[r.String()] = n
		}
	}
	if c.minGap >= 0 {
		g := seconds(time.Duration(c.minGap))
		j.MinGap = &g
	}
	if c.robotsIntervals > 0 {
		i := seconds(c.robotsInterval())
		j.RobotsInterval = &i
	}
	for _, v := range c.examples {
		j.Examples = append(j.Examples, jsonViolation{rep.kindKey(v.kind), v.log, v.line, rfc3339(v.at), v.host, v.target, v.detail})
	}
	return j
}

func seconds(d time.Duration) float64 { return d.Seconds() }
