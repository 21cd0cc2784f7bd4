package audit

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/polite-go/polite/cmd/polite/internal/audit/audittest"
)

// A parsed is a logRecord as the parse tests write it.
type parsed struct {
	start, end string // RFC 3339
	res        time.Duration
	host       string
	target     string
	status     int
	bytes      int64
	ua         string
	retryAfter time.Duration // -1 for none
}

func parsedOf(r *logRecord) parsed {
	return parsed{
		start: rfc3339(r.start), end: rfc3339(r.end), res: time.Duration(r.res),
		host: string(r.host), target: string(r.target), status: r.status, bytes: r.bytes, ua: string(r.ua),
		retryAfter: time.Duration(r.retryAfter),
	}
}

type parseCase struct {
	name string
	line string
	want parsed
	bad  string // the reason, when the line cannot be read
}

func runParseCases(t *testing.T, p *lineParser, tests []parseCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r logRecord
			bad := p.parse([]byte(tt.line), &r)
			if bad != tt.bad {
				t.Fatalf("parse = %q; want %q", bad, tt.bad)
			}
			if bad != "" {
				return
			}
			if got := parsedOf(&r); got != tt.want {
				t.Errorf("parse =\n%+v; want\n%+v", got, tt.want)
			}
		})
	}
}

func TestParseCLF(t *testing.T) {
	const ua = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
	clf := func(target, status, ua string) parsed {
		return parsed{start: "2026-10-10T20:55:36Z", end: "2026-10-10T20:55:36Z", res: time.Second, target: target, status: 200, bytes: 2326, ua: ua, retryAfter: -1}
	}
	withHost := func(p parsed, host string) parsed { p.host = host; return p }
	tests := []parseCase{
		{"combined", `203.0.113.9 - - [10/Oct/2026:13:55:36 -0700] "GET /a?b=c HTTP/1.1" 200 2326 "https://ref.example/" "` + ua + `"`,
			clf("/a?b=c", "200", ua), ""},
		{"common", `203.0.113.9 - frank [10/Oct/2026:13:55:36 -0700] "GET /a HTTP/1.0" 200 2326`, clf("/a", "200", ""), ""},
		{"nginx virtual host", `Shop.Example 203.0.113.9 - - [10/Oct/2026:13:55:36 -0700] "GET /a HTTP/1.1" 200 2326 "-" "curl/8.5"`,
			withHost(clf("/a", "200", "curl/8.5"), "Shop.Example"), ""},
		{"Apache vhost_combined", `shop.example:443 203.0.113.9 - - [10/Oct/2026:13:55:36 -0700] "GET /a HTTP/1.1" 200 2326 "-" "curl/8.5"`,
			withHost(clf("/a", "200", "curl/8.5"), "shop.example:443"), ""},
		{"fields after the User-Agent", `203.0.113.9 - - [10/Oct/2026:13:55:36 -0700] "GET /a HTTP/1.1" 200 2326 "-" "curl/8.5" 0.123 "x"`,
			clf("/a", "200", "curl/8.5"), ""},
		{"escaped quotes", `203.0.113.9 - - [10/Oct/2026:13:55:36 -0700] "GET /a\"b HTTP/1.1" 200 2326 "-" "say \"hi\""`,
			clf(`/a\"b`, "200", `say \"hi\"`), ""},
		{"absolute-form target", `203.0.113.9 - - [10/Oct/2026:13:55:36 -0700] "GET HTTP://Shop.Example:8080?q HTTP/1.1" 200 2326 "-" "x"`,
			withHost(clf("/?q", "200", "x"), "Shop.Example:8080"), ""},
		{"no request line", `203.0.113.9 - - [10/Oct/2026:13:55:36 -0700] "-" 400 2326 "-" "-"`,
			func() parsed { p := clf("", "400", "-"); p.status = 400; return p }(), ""},
		{"HTTP/0.9", `203.0.113.9 - - [10/Oct/2026:13:55:36 -0700] "GET /old" 200 2326`, clf("/old", "200", ""), ""},
		{"no bytes", `203.0.113.9 - - [10/Oct/2026:13:55:36 -0700] "GET /a HTTP/1.1" 200 - "-" "x"`,
			func() parsed { p := clf("/a", "200", "x"); p.bytes = 0; return p }(), ""},
		{"a year's last second", `h - - [31/Dec/2025:23:59:59 +0000] "GET / HTTP/1.1" 200 1`,
			parsed{start: "2025-12-31T23:59:59Z", end: "2025-12-31T23:59:59Z", res: time.Second, target: "/", status: 200, bytes: 1, retryAfter: -1}, ""},
		{"a leap day", `h - - [29/Feb/2028:12:00:00 +0530] "GET / HTTP/1.1" 200 1`,
			parsed{start: "2028-02-29T06:30:00Z", end: "2028-02-29T06:30:00Z", res: time.Second, target: "/", status: 200, bytes: 1, retryAfter: -1}, ""},
		{"two fields before the time", `h - [10/Oct/2026:13:55:36 -0700] "GET / HTTP/1.1" 200 1`, parsed{}, badFormat},
		{"five fields before the time", `v h - - x [10/Oct/2026:13:55:36 -0700] "GET / HTTP/1.1" 200 1`, parsed{}, badFormat},
		{"no time", `h - - "GET / HTTP/1.1" 200 1`, parsed{}, badFormat},
		{"a bad month", `h - - [10/Okt/2026:13:55:36 -0700] "GET / HTTP/1.1" 200 1`, parsed{}, badTime},
		{"a bad zone", `h - - [10/Oct/2026:13:55:36 0700] "GET / HTTP/1.1" 200 1`, parsed{}, badTime},
		{"an hour too many", `h - - [10/Oct/2026:24:00:00 +0000] "GET / HTTP/1.1" 200 1`, parsed{}, badTime},
		{"an unquoted request", `h - - [10/Oct/2026:13:55:36 -0700] GET / HTTP/1.1 200 1`, parsed{}, badRequest},
		{"an unclosed request", `h - - [10/Oct/2026:13:55:36 -0700] "GET / HTTP/1.1 200 1`, parsed{}, badRequest},
		{"a long status", `h - - [10/Oct/2026:13:55:36 -0700] "GET / HTTP/1.1" 2000 1`, parsed{}, badStatus},
		{"no byte count", `h - - [10/Oct/2026:13:55:36 -0700] "GET / HTTP/1.1" 200 x`, parsed{}, badBytes},
	}
	runParseCases(t, &lineParser{}, tests)
}

func TestParseJSON(t *testing.T) {
	rec := func(start, end string, res time.Duration, host, target string, status int, bytes int64, ua string, retryAfter time.Duration) parsed {
		return parsed{start, end, res, host, target, status, bytes, ua, retryAfter}
	}
	const caddy = `{"level":"info","ts":1772359200.25,"logger":"http.log.access","msg":"handled request",` +
		`"request":{"remote_ip":"203.0.113.9","proto":"HTTP/2.0","method":"GET","host":"shop.example","uri":"/a?b",` +
		`"headers":{"Accept":["*/*"],"User-Agent":["GPTBot/1.1"]}},"bytes_read":0,"duration":0.25,"size":1234,"status":429,` +
		`"resp_headers":{"Retry-After":["30"]}}`
	tests := []parseCase{
		{"nginx escape=json", `{"time_iso8601":"2026-03-01T11:00:00+01:00","host":"shop.example","request":"GET /a HTTP/1.1","status":"200","body_bytes_sent":"12","http_user_agent":"x \"y\" \u00e9\ud83d\ude00"}`,
			rec("2026-03-01T10:00:00Z", "2026-03-01T10:00:00Z", time.Second, "shop.example", "/a", 200, 12, `x "y" é😀`, -1), ""},
		{"Caddy", caddy,
			rec("2026-03-01T10:00:00Z", "2026-03-01T10:00:00.25Z", 20*time.Millisecond, "shop.example", "/a?b", 429, 1234, "GPTBot/1.1", 30*time.Second), ""},
		{"Elastic Common Schema, nested", `{"@timestamp":"2026-03-01T10:00:00.5Z","url":{"original":"/x","domain":"shop.example"},"user_agent":{"original":"curl/8"},"http":{"response":{"status_code":404,"body":{"bytes":7}}}}`,
			rec("2026-03-01T10:00:00.5Z", "2026-03-01T10:00:00.5Z", 100*time.Millisecond, "shop.example", "/x", 404, 7, "curl/8", -1), ""},
		{"Elastic Common Schema, flat", `{"@timestamp":"2026-03-01T10:00:00.500Z","url.original":"/x","user_agent.original":"curl/8","http.response.status_code":404}`,
			rec("2026-03-01T10:00:00.5Z", "2026-03-01T10:00:00.5Z", time.Millisecond, "", "/x", 404, 0, "curl/8", -1), ""},
		{"milliseconds since 1970", `{"time":1772359200123,"path":"/x"}`,
			rec("2026-03-01T10:00:00.123Z", "2026-03-01T10:00:00.123Z", time.Millisecond, "", "/x", 0, 0, "", -1), ""},
		{"seconds as a string", `{"time":"1772359200","path":"/x"}`,
			rec("2026-03-01T10:00:00Z", "2026-03-01T10:00:00Z", time.Second, "", "/x", 0, 0, "", -1), ""},
		{"the Common Log Format's time", `{"time_local":"01/Mar/2026:11:00:00 +0100","request":"GET /x HTTP/1.1"}`,
			rec("2026-03-01T10:00:00Z", "2026-03-01T10:00:00Z", time.Second, "", "/x", 0, 0, "", -1), ""},
		{"the first key of a field wins", `{"path":"/second","time":"2026-03-01T10:00:00Z","request_uri":"/first","request":"GET /third HTTP/1.1"}`,
			rec("2026-03-01T10:00:00Z", "2026-03-01T10:00:00Z", time.Second, "", "/first", 0, 0, "", -1), ""},
		{"an absolute URL", `{"time":"2026-03-01T10:00:00Z","url":"https://Shop.Example/p?q=1"}`,
			rec("2026-03-01T10:00:00Z", "2026-03-01T10:00:00Z", time.Second, "Shop.Example", "/p?q=1", 0, 0, "", -1), ""},
		{"a Retry-After date", `{"time":"2026-03-01T10:00:00Z","path":"/","status":503,"retry_after":"Sun, 01 Mar 2026 10:02:00 GMT"}`,
			rec("2026-03-01T10:00:00Z", "2026-03-01T10:00:00Z", time.Second, "", "/", 503, 0, "", 2*time.Minute), ""},
		{"nulls and other values", `{"time":"2026-03-01T10:00:00Z","path":"/","ua":null,"x":[1,{"y":[true,false]}],"z":-1.5e3}`,
			rec("2026-03-01T10:00:00Z", "2026-03-01T10:00:00Z", time.Second, "", "/", 0, 0, "", -1), ""},
		{"malformed", `{"time":"2026-03-01T10:00:00Z","path":"/"`, parsed{}, badJSON},
		{"trailing text", `{"time":"2026-03-01T10:00:00Z","path":"/"} x`, parsed{}, badJSON},
		{"no time", `{"path":"/"}`, parsed{}, "no time field (see -fields)"},
		{"a bad time", `{"time":"yesterday","path":"/"}`, parsed{}, badTime},
		{"no request", `{"time":"2026-03-01T10:00:00Z","request":{"method":"GET"}}`, parsed{}, "no request or path field (see -fields)"},
		{"a bad status", `{"time":"2026-03-01T10:00:00Z","path":"/","status":"OK"}`, parsed{}, badStatus},
		{"too deep", `{"a":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`, parsed{}, badJSON},
	}
	runParseCases(t, &lineParser{}, tests)

	mapped := Fields{}
	if err := mapped.Set("time=when,ua=client.agent,path=request"); err != nil {
		t.Fatal(err)
	}
	p := &lineParser{}
	p.json.root = newJSONTree(mapped)
	runParseCases(t, p, []parseCase{
		{"-fields", `{"when":"2026-03-01T10:00:00Z","client":{"agent":"curl/8"},"request":"/mapped","time":"1999-01-01T00:00:00Z"}`,
			rec("2026-03-01T10:00:00Z", "2026-03-01T10:00:00Z", time.Second, "", "/mapped", 0, 0, "curl/8", -1), ""},
	})
}

func TestParseRFC3339(t *testing.T) {
	tests := []struct {
		in   string
		want string // "" when it cannot be read
		res  time.Duration
	}{
		{"2026-03-01T10:00:00Z", "2026-03-01T10:00:00Z", time.Second},
		{"2026-03-01 10:00:00z", "2026-03-01T10:00:00Z", time.Second},
		{"2026-03-01t10:00:00,5+01:00", "2026-03-01T09:00:00.5Z", 100 * time.Millisecond},
		{"2026-03-01T10:00:00.123456789123-0130", "2026-03-01T11:30:00.123456789Z", time.Nanosecond},
		{"2026-03-01T10:00:00", "", 0},
		{"2026-03-01T10:00:00.Z", "", 0},
		{"2026-13-01T10:00:00Z", "", 0},
		{"2026-03-01T10:00:00+25:00", "", 0},
	}
	for _, tt := range tests {
		got, res, ok := parseRFC3339([]byte(tt.in))
		switch {
		case tt.want == "" && ok:
			t.Errorf("parseRFC3339(%q) = %s; want an error", tt.in, rfc3339(got))
		case tt.want != "" && (!ok || rfc3339(got) != tt.want || time.Duration(res) != tt.res):
			t.Errorf("parseRFC3339(%q) = %s, %v, %v; want %s, %v", tt.in, rfc3339(got), time.Duration(res), ok, tt.want, tt.res)
		}
	}
}

// TestReadLines reads lines across the blocks of the reading goroutine,
// with their numbers.
func TestReadLines(t *testing.T) {
	long := strings.Repeat("y", maxLine+5)
	span := strings.Repeat("z", blockSize-3) // the next line starts in one block and ends in the next
	tests := []struct {
		name string
		in   string
		want []string // by number, from 1
	}{
		{"LF and CR LF", "a\r\nb\nc", []string{"a", "b", "c"}},
		{"blank lines are numbered", "a\n\n\nb\n", []string{"a", "", "", "b"}},
		{"a line across blocks", span + "\nhello\nworld\n", []string{span, "hello", "world"}},
		{"a long line", "a\n" + long + "\nb\n", []string{"a", long[:maxLine+1], "b"}},
		{"a long line across blocks", span + long + "\nb", []string{(span + long)[:maxLine+1], "b"}},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			err := readLines(t.Context(), strings.NewReader(tt.in), func(n int64, text []byte) {
				if n != int64(len(got)+1) {
					t.Errorf("line %d after %d lines", n, len(got))
				}
				got = append(got, string(text))
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("%d lines; want %d", len(got), len(tt.want))
			}
			for i := range got {
				if got[i] != tt.want[i] && !(len(got[i]) > maxLine && len(tt.want[i]) > maxLine) {
					t.Errorf("line %d = %.20q (%d bytes); want %.20q (%d bytes)", i+1, got[i], len(got[i]), tt.want[i], len(tt.want[i]))
				}
			}
		})
	}
}

// TestReadLinesError checks that a gzipped log that fails part way gives
// its lines, then the error.
func TestReadLinesError(t *testing.T) {
	gz := audittest.Gzip([]byte("a\nb\nc\n"))
	gz[len(gz)-5] ^= 0xff // the checksum
	var lines bytes.Buffer
	err := ReadLog(t.Context(), bytes.NewReader(gz), func(n int64, text []byte) { fmt.Fprintf(&lines, "%d:%s ", n, text) })
	if err == nil || lines.String() != "1:a 2:b 3:c " {
		t.Errorf("readLines: %q, %v; want three lines and an error", lines.String(), err)
	}
}
