package audit

import (
	"encoding/csv"
	"io"
	"strconv"
	"time"
)

// WriteCSV writes a row per crawler, after a row of headings.
func (rep *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	head := []string{"crawler", "group", "judged", "user_agent", "requests", "bytes"}
	for k := range numKinds + len(rep.a.checks) {
		head = append(head, rep.kindKey(k))
	}
	head = append(head, "top_rule", "crawl_delay_seconds", "min_gap_seconds", "robots_fetches", "robots_interval_seconds")
	cw.Write(head)
	for _, c := range rep.rows {
		row := []string{c.name, c.groupLabel(), strconv.FormatBool(c.judged()), c.firstUA, itoa(c.requests), itoa(c.bytes)}
		for _, n := range c.counts {
			row = append(row, itoa(n))
		}
		minGap, interval := "", ""
		if c.minGap >= 0 {
			minGap = ftoa(seconds(time.Duration(c.minGap)))
		}
		if c.robotsIntervals > 0 {
			interval = ftoa(seconds(c.robotsInterval()))
		}
		row = append(row, topRule(c.byRule), ftoa(seconds(time.Duration(c.maxDelay))), minGap, itoa(c.robotsFetches), interval)
		cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
