// Package robotstest holds the robots.txt files and paths that the tests and
// benchmarks of package polite and of package robotstxt share, so that the
// transport's figures and the engine's are of the same work.
package robotstest

import (
	"fmt"
	"strings"
)

// RFC9309Example is the example of RFC 9309 §5.1.
const RFC9309Example = `User-Agent: *
Disallow: *.gif$
Disallow: /example/
Allow: /publications/

User-Agent: foobot
Disallow:/
Allow:/example/page.html
Allow:/example/allowed.gif

User-Agent: barbot
User-Agent: bazbot
Disallow: /example/page.html

User-Agent: quxbot

EOF
`

// AttachExample is the robots.txt of draft-ietf-aipref-attach-05 §3.4:
// the crawlers of the "*" group may fetch all but /never/, with the usage
// preference train-ai=n, and train-ai=y under /ai-ok/; ExampleBot, which
// has a group of its own, may fetch everything, with train-ai=y.
const AttachExample = `User-Agent: *
Allow: /
Disallow: /never/
Content-Usage: train-ai=n
Content-Usage: /ai-ok/ train-ai=y

User-Agent: ExampleBot
Allow: /
Content-Usage: train-ai=y
`

// Path matches none of the rules of File, so every rule is tried.
const Path = "/articles/2024/a-page-title?id=42&ref=home"

// File returns a robots.txt whose "*" group holds n rules: every
// wildEvery-th a wildcard pattern (none when wildEvery is 0), the others
// path prefixes, a fifth of them Allow, as large sites write them. A group
// for another crawler is read and never binds.
func File(n, wildEvery int) string {
	var b strings.Builder
	b.WriteString("# benchmark robots.txt\nUser-agent: otherbot\nDisallow: /\n\nUser-agent: *\n")
	for i := range n {
		switch {
		case wildEvery > 0 && i%wildEvery == wildEvery-1:
			switch i / wildEvery % 3 {
			case 0:
				fmt.Fprintf(&b, "Disallow: /*?sessionid%d=\n", i)
			case 1:
				fmt.Fprintf(&b, "Disallow: /*.ext%d$\n", i)
			default:
				fmt.Fprintf(&b, "Disallow: /search/*/page-%d\n", i)
			}
		case i%5 == 0:
			fmt.Fprintf(&b, "Allow: /section-%d/public/\n", i)
		default:
			fmt.Fprintf(&b, "Disallow: /section-%d/\n", i)
		}
	}
	b.WriteString("\nSitemap: https://example.com/sitemap.xml\n")
	return b.String()
}

// RuleCounts are the robots.txt sizes of the hot-path figures.
var RuleCounts = []int{0, 20, 200}

// WildEvery makes a quarter of the rules of the hot-path figures wildcards.
const WildEvery = 4
