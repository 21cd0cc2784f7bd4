package robotstxt

import (
	"fmt"
	"strings"
	"testing"

	"github.com/polite-go/polite/internal/cputime"
	"github.com/polite-go/polite/internal/robotstest"
)

// usageLines are the usage lines that BenchmarkUsageDecision adds to the
// "*" group of its file: Cloudflare's managed line and three Content-Usage
// rules, one matching the benchmark's path.
const usageLines = "User-agent: *\n" +
	"Content-Signal: search=yes, ai-train=no\n" +
	"Content-Usage: train-ai=n\n" +
	"Content-Usage: /articles/ train-ai=y, search=y\n" +
	"Content-Usage: /*/drafts/ search=n\n"

// BenchmarkUsageDecision is a decision on one request, a group of 20 rules
// compiled, with the usage preferences and without: "decide" is
// Group.Decide, as the transport makes it for every request;
// "decide+usage" adds Group.Usage, as a transport declaring its uses
// makes it. "file=plain" has no usage line; "file=usage" adds usageLines.
//
//	go test -run '^$' -bench '^BenchmarkUsageDecision$' -benchmem -count 6 ./robotstxt
func BenchmarkUsageDecision(b *testing.B) {
	plain := robotstest.File(20, robotstest.WildEvery)
	files := []struct{ name, body string }{
		{"plain", plain},
		{"usage", strings.Replace(plain, "\nSitemap:", "\n"+usageLines+"\nSitemap:", 1)},
	}
	for _, f := range files {
		g := Parse([]byte(f.body)).Group("BenchBot/1.0")
		for range linearDecisions + 1 {
			g.Decide(robotstest.Path) // compiled, as on the hot path
		}
		if u, err := g.Usage(robotstest.Path); err != nil || (f.name == "usage") != (u.Of(TrainAI) == No) {
			b.Fatalf("%s: Usage = %q, %v", f.name, u, err)
		}
		b.Run(fmt.Sprintf("file=%s/decide", f.name), func(b *testing.B) {
			cputime.Loop(b, func() {
				if allowed, _, _ := g.Decide(robotstest.Path); !allowed {
					b.Fatal("refused")
				}
			})
		})
		b.Run(fmt.Sprintf("file=%s/decide+usage", f.name), func(b *testing.B) {
			cputime.Loop(b, func() {
				if allowed, _, _ := g.Decide(robotstest.Path); !allowed {
					b.Fatal("refused")
				}
				if u, _ := g.Usage(robotstest.Path); u.Of(TrainAI) == Yes {
					b.Fatal("train-ai=y")
				}
			})
		})
	}
}
