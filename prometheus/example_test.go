package politeprom_test

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/polite-go/polite"
	politeprom "github.com/polite-go/polite/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// A crawler's transport reports to a registry that a /metrics endpoint
// serves. Two pages are fetched and one is refused by robots.txt; the
// scrape shows them, and the state of the one host, now idle.
func Example() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
			return
		}
		fmt.Fprint(w, "hello")
	}))
	defer site.Close()

	reg := prometheus.NewRegistry() // served by promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	m := politeprom.New(reg)
	t := polite.New(nil, polite.WithUserAgent("MyBot/1.0 (+https://example.com/bot)"), m.Option())
	m.Track(t)
	client := &http.Client{Transport: t}
	for _, path := range []string{"/a", "/b", "/private/c"} {
		if resp, err := client.Get(site.URL + path); err == nil {
			resp.Body.Close()
		}
	}

	metrics := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer metrics.Close()
	resp, err := http.Get(metrics.URL + "/metrics")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	show := map[string]bool{
		"polite_requests_total":          true,
		"polite_wait_seconds_count":      true, // the sum and buckets are times
		"polite_robots_disallowed_total": true,
		"polite_robots_fetches_total":    true,
		"polite_hosts":                   true,
		"polite_requests_in_flight":      true,
	}
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() {
		line := lines.Text()
		if name, _, _ := strings.Cut(line, " "); show[strings.Split(name, "{")[0]] {
			fmt.Println(line)
		}
	}
	// Output:
	// polite_hosts 1
	// polite_requests_in_flight 0
	// polite_requests_total 2
	// polite_robots_disallowed_total{action="refused"} 1
	// polite_robots_disallowed_total{action="sent"} 0
	// polite_robots_fetches_total{result="fetched",status="2xx"} 1
	// polite_wait_seconds_count 2
}
