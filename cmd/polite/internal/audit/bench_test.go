package audit

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/polite-go/polite/internal/cputime"
)

// The flags of TestWriteAuditBenchLog, which writes the log that
// BENCHMARKS.md times polite audit on, as a whole process.
var (
	auditBenchLog    = flag.String("auditbench.log", "", "TestWriteAuditBenchLog: write a generated access log to this `file`, and its robots.txt beside it, as file.robots.txt")
	auditBenchLines  = flag.Int("auditbench.lines", 10_000_000, "TestWriteAuditBenchLog: the lines to write")
	auditBenchFormat = flag.String("auditbench.format", "combined", "TestWriteAuditBenchLog: combined, json, or adversarial: each line of a new crawler, host and path")
)

// benchRobots is the robots.txt of the benchmark logs: named groups, a
// "*" group, wildcards and Crawl-delays, as a large site's.
const benchRobots = `User-agent: *
Crawl-delay: 1
Disallow: /private/
Disallow: /tmp/
Disallow: /cart
Disallow: /checkout/
Disallow: /*?sort=
Disallow: /*?session=
Disallow: /search
Allow: /search/about
Disallow: /*.json$
Disallow: /admin/
Disallow: /api/
Allow: /api/public/

User-agent: Googlebot
User-agent: bingbot
Disallow: /private/
Disallow: /cart
Disallow: /*?session=
Disallow: /checkout/

User-agent: GPTBot
User-agent: CCBot
Disallow: /

User-agent: ClaudeBot
Disallow: /products/
Crawl-delay: 5

User-agent: AhrefsBot
User-agent: SemrushBot
Crawl-delay: 10
Disallow: /search
Disallow: /*?
`

// benchAgents are the User-Agents of the benchmark logs, with their
// weights: browsers for about half the lines, as on most sites.
var benchAgents = []struct {
	ua     string
	weight int
}{
	{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36", 20},
	{"Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1", 12},
	{"Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0", 8},
	{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15", 8},
	{"Mozilla/5.0 (Linux; Android 14) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36", 7},
	{"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", 6},
	{"Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.69 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", 5},
	{"Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", 5},
	{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)", 3},
	{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)", 3},
	{"Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)", 4},
	{"Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)", 3},
	{"Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)", 2},
	{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)", 2},
	{"CCBot/2.0 (https://commoncrawl.org/faq/)", 1},
	{"curl/8.5.0", 1},
	{"python-requests/2.32.3", 1},
	{"Go-http-client/1.1", 1},
	{"", 1}, // a scanner's own name, different on each line
}

// genBench writes n lines of a day's access log in the Combined Log
// Format with nginx's virtual host, or JSON: three hosts, a Zipf's law
// over 50,000 paths, some with queries, one status in ten not 200.
func genBench(w io.Writer, n int, jsonLines bool) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	zipf := rand.NewZipf(rng, 1.1, 1, 50_000)
	total := 0
	for _, a := range benchAgents {
		total += a.weight
	}
	prefixes := []string{"/products/", "/blog/", "/search?q=", "/private/", "/tmp/", "/api/public/", "/cart?item=", "/category/", "/api/v2/"}
	hosts := []string{"shop.example", "www.shop.example", "blog.shop.example"}
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	step := 24 * time.Hour / time.Duration(n)
	var line []byte
	for i := range n {
		pick := rng.IntN(total)
		ua := ""
		for _, a := range benchAgents {
			if pick -= a.weight; pick < 0 {
				ua = a.ua
				break
			}
		}
		if ua == "" {
			ua = fmt.Sprintf("scanner-%d/1.0", rng.IntN(20_000))
		}
		p := zipf.Uint64()
		path := fmt.Sprintf("%s%d", prefixes[p%uint64(len(prefixes))], p)
		switch r := rng.IntN(100); {
		case r < 5:
			path += fmt.Sprintf("?sort=price&page=%d", rng.IntN(1000))
		case r < 6:
			path = "/robots.txt"
		}
		status := 200
		switch r := rng.IntN(100); {
		case r < 5:
			status = 304
		case r < 8:
			status = 404
		case r < 9:
			status = 429
		case r < 10:
			status = 503
		}
		at := start.Add(time.Duration(i) * step)
		host := hosts[rng.IntN(len(hosts))]
		line = line[:0]
		if jsonLines {
			line = fmt.Appendf(line, `{"time_iso8601":%q,"host":%q,"remote_addr":"192.0.2.%d","request":"GET %s HTTP/1.1","status":%d,"body_bytes_sent":%d,"http_referer":"-","http_user_agent":%q,"request_time":"0.%03d"}`+"\n",
				at.Format(time.RFC3339), host, rng.IntN(256), path, status, rng.IntN(50_000), ua, rng.IntN(1000))
		} else {
			line = fmt.Appendf(line, "%s 192.0.2.%d - - [%s] \"GET %s HTTP/1.1\" %d %d \"-\" \"%s\"\n",
				host, rng.IntN(256), at.Format("02/Jan/2006:15:04:05 -0700"), path, status, rng.IntN(50_000), ua)
		}
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// genAdversarial writes n lines that take the most memory audit's bounds
// allow: each of a new crawler, on one of 150,000 hosts, for a path of
// its own 140 bytes long; a quarter of them answered 429 or 503.
func genAdversarial(w io.Writer, n int) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	rng := rand.New(rand.NewPCG(3, 4))
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		at := start.Add(time.Duration(i) * 20 * time.Millisecond)
		fmt.Fprintf(bw, "h%d.example 192.0.2.1 - - [%s] \"GET /p/%016x%016x%016x%016x%016x%016x%016x%016x?i=%d HTTP/1.1\" %d 100 \"-\" \"scanner-%d/1.0 (+http://x.example/bot)\"\n",
			i%150_000, at.Format("02/Jan/2006:15:04:05 -0700"), rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64(),
			rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64(), i, []int{200, 200, 429, 503}[rng.IntN(4)], i)
	}
	return bw.Flush()
}

// TestWriteAuditBenchLog writes the log of BENCHMARKS.md's timings when
// -auditbench.log names a file; otherwise it does nothing.
//
//	go test -run TestWriteAuditBenchLog ./cmd/polite -args -auditbench.log=/tmp/access.log
func TestWriteAuditBenchLog(t *testing.T) {
	if *auditBenchLog == "" {
		t.Skip("no -auditbench.log")
	}
	f, err := os.Create(*auditBenchLog)
	if err != nil {
		t.Fatal(err)
	}
	switch *auditBenchFormat {
	case "adversarial":
		err = genAdversarial(f, *auditBenchLines)
	default:
		err = genBench(f, *auditBenchLines, *auditBenchFormat == "json")
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(*auditBenchLog+".robots.txt", []byte(benchRobots), 0o644); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkAuditLine measures the audit of one line, read, named and
// judged, over a generated log of 200,000 lines that it goes through
// again and again: the reading of the file is the process's, timed
// apart. It reports, besides ns/op, the CPU time per line, cpu-ns/op.
//
//	go test -run '^$' -bench AuditLine -benchmem ./cmd/polite
func BenchmarkAuditLine(b *testing.B) {
	for _, format := range []string{"combined", "json"} {
		b.Run(format, func(b *testing.B) {
			var buf bytes.Buffer
			if err := genBench(&buf, 200_000, format == "json"); err != nil {
				b.Fatal(err)
			}
			lines := bytes.Split(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("\n"))
			a := newAuditor([]Robots{versionOf(benchRobots, math.MinInt64)}, DefaultRetryAfter, false, nil)
			i := 0
			cputime.Loop(b, func() {
				a.Line("bench", int64(i), lines[i%len(lines)])
				i++
			})
			if a.Unparsed() > 0 {
				b.Fatalf("%d lines could not be read: %+v", a.Unparsed(), a.unparsed)
			}
		})
	}
}
