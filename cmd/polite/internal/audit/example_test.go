package audit_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/polite-go/polite/cmd/polite/internal/audit"
)

// An access log of nginx's Combined Log Format, judged against a
// robots.txt with a Crawl-delay: ExampleBot came too soon and fetched a
// disallowed URL; the person with Firefox is not judged.
func Example() {
	dir, err := os.MkdirTemp("", "audit")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	robots := filepath.Join(dir, "robots.txt")
	if err := os.WriteFile(robots, []byte("User-agent: *\nDisallow: /private/\nCrawl-delay: 2\n"), 0o644); err != nil {
		log.Fatal(err)
	}
	versions, err := audit.LoadRobots([]audit.RobotsFile{{Path: robots}})
	if err != nil {
		log.Fatal(err)
	}

	a := audit.New(versions, audit.Options{RetryAfter: audit.DefaultRetryAfter})
	access := `shop.example 192.0.2.7 - - [01/Mar/2026:10:00:00 +0000] "GET /robots.txt HTTP/1.1" 200 64 "-" "ExampleBot/1.0"
shop.example 192.0.2.7 - - [01/Mar/2026:10:00:05 +0000] "GET / HTTP/1.1" 200 5120 "-" "ExampleBot/1.0"
shop.example 192.0.2.7 - - [01/Mar/2026:10:00:06 +0000] "GET /private/orders HTTP/1.1" 200 812 "-" "ExampleBot/1.0"
shop.example 198.51.100.3 - - [01/Mar/2026:10:00:06 +0000] "GET /private/orders HTTP/1.1" 200 812 "-" "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0"
`
	err = audit.ReadLog(context.Background(), strings.NewReader(access), func(n int64, line []byte) {
		a.Line("access.log", n, line)
	})
	if err != nil {
		log.Fatal(err)
	}
	rep := a.Report([]string{"access.log"})
	for _, c := range rep.Crawlers() {
		fmt.Printf("%s: judged %v, %d violations\n", c.Name, c.Judged, c.Violations)
	}
	if err := rep.WriteCSV(os.Stdout); err != nil {
		log.Fatal(err)
	}
	// Output:
	// examplebot: judged true, 2 violations
	// (browsers): judged false, 0 violations
	// crawler,group,judged,user_agent,requests,bytes,disallowed,too_soon,in_pause,top_rule,crawl_delay_seconds,min_gap_seconds,robots_fetches,robots_interval_seconds
	// examplebot,*,true,ExampleBot/1.0,3,5996,1,1,0,Disallow: /private/,2,1,1,
	// (browsers),-,false,Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0,1,812,0,0,0,,0,,0,
}
