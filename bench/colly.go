package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/polite-go/polite"
	politecolly "github.com/polite-go/polite/colly"
	"github.com/polite-go/polite/pace"
)

// versusColly crawls the same local site with polite (an http.Client over
// PoliteTransport, one goroutine per URL), with gocolly/colly v2 (async,
// robots.txt obeyed, one LimitRule per host with the same Delay and
// Parallelism 1, colly's way to pace per host) and with colly as the recipe
// of politecolly.NewCollector sets it over polite (async), taking turns in rounds,
// then probes which politeness rules each honours, from what the site
// received.
func versusColly(args []string) error {
	fs := flag.NewFlagSet("colly", flag.ExitOnError)
	hosts := fs.Int("hosts", 100, "hosts of the site")
	pages := fs.Int("pages", 20, "pages per host")
	delay := fs.Duration("delay", 50*time.Millisecond, "per-host delay of both crawlers")
	rounds := fs.Int("rounds", 5, "crawls by each crawler")
	rulesOnly := fs.Bool("rules-only", false, "skip the timed crawls")
	fs.Parse(args)

	s, err := startSite()
	if err != nil {
		return err
	}
	defer s.close()

	if !*rulesOnly {
		fmt.Printf("crawl: %d hosts × %d pages of 2 KiB, delay %v per host, robots.txt of 20 rules\n", *hosts, *pages, *delay)
		for _, d := range []time.Duration{*delay, 0} {
			if err := crawlRounds(s, *hosts, *pages, d, *rounds); err != nil {
				return err
			}
		}
	}
	return ruleProbes(s)
}

// crawler is one of the contestants.
type crawler interface {
	// crawl fetches every URL, as concurrently as the crawler allows, and
	// returns the pages fetched.
	crawl(urls []string) (int, error)
}

// politeCrawler is an http.Client over PoliteTransport, one goroutine per URL.
type politeCrawler struct{ c *http.Client }

// baseDelay returns d as a pace.Policy's BaseDelay: None for 0, which
// means no delay here and the default there.
func baseDelay(d time.Duration) time.Duration {
	if d == 0 {
		return pace.None
	}
	return d
}

func newPoliteCrawler(s *site, delay time.Duration, hosts int) *politeCrawler {
	tr := polite.New(s.transport(), polite.WithUserAgent("BenchBot/1.0"),
		polite.WithPacing(pace.Policy{BaseDelay: baseDelay(delay), Jitter: pace.None}),
		polite.WithLimits(polite.Limits{MaxKeys: 2*hosts + 10, MaxOrigins: 2*hosts + 10}))
	return &politeCrawler{c: &http.Client{Transport: tr}}
}

func (p *politeCrawler) crawl(urls []string) (int, error) {
	var fetched atomic.Int64
	var wg sync.WaitGroup
	for _, u := range urls {
		wg.Go(func() {
			resp, err := p.c.Get(u)
			if err != nil {
				return
			}
			_, err = io.ReadAll(resp.Body) // as colly does
			resp.Body.Close()
			if err == nil && resp.StatusCode == http.StatusOK {
				fetched.Add(1)
			}
		})
	}
	wg.Wait()
	return int(fetched.Load()), nil
}

// collyCrawler is a colly collector in async mode with robots.txt obeyed
// and one LimitRule per host.
type collyCrawler struct {
	c       *colly.Collector
	fetched atomic.Int64
}

func newCollyCrawler(s *site, delay time.Duration, hosts []string) (*collyCrawler, error) {
	cc := &collyCrawler{c: colly.NewCollector(colly.Async(true), colly.UserAgent("BenchBot/1.0"))}
	cc.c.IgnoreRobotsTxt = false
	cc.c.WithTransport(s.transport())
	for _, h := range hosts {
		if err := cc.c.Limit(&colly.LimitRule{DomainGlob: h, Parallelism: 1, Delay: delay}); err != nil {
			return nil, err
		}
	}
	cc.c.OnResponse(func(r *colly.Response) {
		if r.StatusCode == http.StatusOK {
			cc.fetched.Add(1)
		}
	})
	cc.c.OnError(func(*colly.Response, error) {})
	return cc, nil
}

func (cc *collyCrawler) crawl(urls []string) (int, error) {
	// Visit checks robots.txt synchronously, then fetches on a goroutine of
	// its own; one goroutine per Visit keeps the two crawlers alike.
	var wg sync.WaitGroup
	for _, u := range urls {
		wg.Go(func() {
			if err := cc.c.Visit(u); err != nil && !errors.Is(err, colly.ErrRobotsTxtBlocked) {
				return
			}
		})
	}
	wg.Wait()
	cc.c.Wait()
	return int(cc.fetched.Load()), nil
}

// newRecipeCrawler returns colly set up by politecolly.NewCollector, async, over
// a PoliteTransport paced as politeCrawler's. Each request has a 30s
// deadline counted from when polite passes it on.
func newRecipeCrawler(s *site, delay time.Duration, hosts int) *collyCrawler {
	c, _ := politecolly.NewCollector("BenchBot/1.0", politecolly.Options{Base: s.transport(), Timeout: 30 * time.Second,
		Polite: []polite.Option{polite.WithPacing(pace.Policy{BaseDelay: baseDelay(delay), Jitter: pace.None}),
			polite.WithLimits(polite.Limits{MaxKeys: 2*hosts + 10, MaxOrigins: 2*hosts + 10})}})
	c.Async = true
	cc := &collyCrawler{c: c}
	c.OnResponse(func(r *colly.Response) {
		if r.StatusCode == http.StatusOK {
			cc.fetched.Add(1)
		}
	})
	c.OnError(func(*colly.Response, error) {})
	return cc
}

// contestants are the crawlers compared, in the order of the tables; the
// ratios are against vsColly.
var contestants = []struct {
	name string
	make func(s *site, delay time.Duration, hosts []string) (crawler, error)
}{
	{"polite", func(s *site, delay time.Duration, hosts []string) (crawler, error) {
		return newPoliteCrawler(s, delay, len(hosts)), nil
	}},
	{"colly", func(s *site, delay time.Duration, hosts []string) (crawler, error) {
		return newCollyCrawler(s, delay, hosts)
	}},
	{"colly+polite", func(s *site, delay time.Duration, hosts []string) (crawler, error) {
		return newRecipeCrawler(s, delay, len(hosts)), nil
	}},
}

const vsColly = 1 // the index of colly in contestants

// crawlRounds times the crawlers over the same site, each round in another
// order.
func crawlRounds(s *site, hosts, pages int, delay time.Duration, rounds int) error {
	var hostNames, urls []string
	for h := range hosts {
		hostNames = append(hostNames, fmt.Sprintf("site-%d.test", h))
	}
	for p := range pages {
		for _, h := range hostNames {
			urls = append(urls, fmt.Sprintf("http://%s/articles/%d?id=%d", h, p, p))
		}
	}
	if err := s.configure(siteConfig{PageBytes: 2048, Robots: map[string]string{"": robotsWithRules(20)}}); err != nil {
		return err
	}
	fmt.Printf("delay %v:\n", delay)
	n := len(contestants)
	walls, cpus := make([][]float64, n), make([][]float64, n)
	wallRatios, cpuRatios := make([][]float64, n), make([][]float64, n) // against vsColly's, per round
	for round := range rounds {
		wall, cpu := make([]float64, n), make([]float64, n)
		for i := range n {
			who := (i + round) % n
			cr, err := contestants[who].make(s, delay, hostNames)
			if err != nil {
				return err
			}
			cpu0, t0 := cpuTime(), time.Now()
			got, err := cr.crawl(urls)
			elapsed, used := time.Since(t0), cpuTime()-cpu0
			if err != nil {
				return err
			}
			if got != len(urls) {
				return fmt.Errorf("%s fetched %d pages of %d", contestants[who].name, got, len(urls))
			}
			wall[who], cpu[who] = elapsed.Seconds(), float64(used.Microseconds())/float64(got)
			walls[who], cpus[who] = append(walls[who], wall[who]), append(cpus[who], cpu[who])
		}
		fmt.Printf("  round %d:", round+1)
		for who, c := range contestants {
			fmt.Printf(" %s %.3fs %.1fµs CPU/page;", c.name, wall[who], cpu[who])
			wallRatios[who] = append(wallRatios[who], wall[who]/wall[vsColly])
			cpuRatios[who] = append(cpuRatios[who], cpu[who]/cpu[vsColly])
		}
		fmt.Println()
	}
	fmt.Printf("  median of %d rounds:     wall      pages/s   CPU/page   wall/colly  CPU/colly\n", rounds)
	for who, c := range contestants {
		w := median(walls[who])
		fmt.Printf("    %-20s %8.3fs %9.0f %8.1fµs %10.3f %10.3f\n", c.name, w, float64(len(urls))/w,
			median(cpus[who]), median(wallRatios[who]), median(cpuRatios[who]))
	}
	return nil
}

// ruleProbes runs one small crawl per politeness rule with each crawler and
// judges the rule from the site's log.
func ruleProbes(s *site) error {
	probes := []struct {
		name string
		run  func(s *site, newCrawler func(delay time.Duration, hosts []string) (crawler, error)) (string, bool, error)
	}{
		{"Crawl-delay honoured", probeCrawlDelay},
		{"robots.txt fetch paced", probeRobotsPaced},
		{"one robots.txt fetch under concurrency", probeOneFetch},
		{"Retry-After honoured", probeRetryAfter},
		{"http and https robots.txt kept apart", probeSchemes},
	}
	fmt.Println("rules:")
	honoured := make([]int, len(contestants))
	for _, p := range probes {
		for who, m := range contestants {
			newCrawler := func(delay time.Duration, hosts []string) (crawler, error) { return m.make(s, delay, hosts) }
			detail, ok, err := p.run(s, newCrawler)
			if err != nil {
				return fmt.Errorf("%s, %s: %v", p.name, m.name, err)
			}
			verdict := "no"
			if ok {
				verdict = "yes"
				honoured[who]++
			}
			fmt.Printf("  %-40s %-13s %-4s %s\n", p.name, m.name, verdict, detail)
		}
	}
	fmt.Print("  honoured:")
	for who, m := range contestants {
		fmt.Printf(" %s %d of %d;", m.name, honoured[who], len(probes))
	}
	fmt.Println()
	return nil
}

// arrivalSlack is how much shorter than its start-to-start gap the gap
// between two arrivals at the site may be: a request that opens a
// connection arrives later after its start than one that reuses it.
const arrivalSlack = 5 * time.Millisecond

// probeCrawlDelay: robots.txt asks for 300 ms between requests, the
// crawler's own delay is 20 ms; the smallest gap between page arrivals
// tells which won.
func probeCrawlDelay(s *site, newCrawler func(time.Duration, []string) (crawler, error)) (string, bool, error) {
	const host = "crawl-delay.test"
	log, err := probeCrawl(s, siteConfig{Robots: map[string]string{host: "User-agent: *\nCrawl-delay: 0.3\n"}},
		newCrawler, 20*time.Millisecond, host, pageURLs("http://"+host, 5))
	if err != nil {
		return "", false, err
	}
	pages := only(log, func(a arrival) bool { return a.Path != "/robots.txt" })
	gap := minGap(pages)
	return fmt.Sprintf("Crawl-delay 300ms, own delay 20ms: smallest gap between pages %.1fms", ms(gap)), gap >= 300*time.Millisecond-arrivalSlack, nil
}

// probeRobotsPaced: with a 300 ms delay, the first page should come 300 ms
// after the robots.txt fetch, as it would after any request.
func probeRobotsPaced(s *site, newCrawler func(time.Duration, []string) (crawler, error)) (string, bool, error) {
	const host = "robots-paced.test"
	log, err := probeCrawl(s, siteConfig{Robots: map[string]string{host: "User-agent: *\nDisallow: /private/\n"}},
		newCrawler, 300*time.Millisecond, host, pageURLs("http://"+host, 2))
	if err != nil {
		return "", false, err
	}
	if len(log) < 2 || log[0].Path != "/robots.txt" {
		return fmt.Sprintf("unexpected log %v", log), false, nil
	}
	gap := log[1].At - log[0].At
	return fmt.Sprintf("delay 300ms: robots.txt to first page %.1fms", ms(gap)), gap >= 300*time.Millisecond-arrivalSlack, nil
}

// probeOneFetch: 1,000 first requests to one origin at once.
func probeOneFetch(s *site, newCrawler func(time.Duration, []string) (crawler, error)) (string, bool, error) {
	const host = "one-fetch.test"
	log, err := probeCrawl(s, siteConfig{Robots: map[string]string{host: "User-agent: *\nDisallow: /private/\n"}},
		newCrawler, 0, host, pageURLs("http://"+host, 1000))
	if err != nil {
		return "", false, err
	}
	n := len(only(log, func(a arrival) bool { return a.Path == "/robots.txt" }))
	return fmt.Sprintf("1,000 concurrent first requests: %d robots.txt fetches", n), n == 1, nil
}

// probeRetryAfter: the first page is answered 429 with Retry-After: 2; the
// next request should come no sooner than 2 s after it.
func probeRetryAfter(s *site, newCrawler func(time.Duration, []string) (crawler, error)) (string, bool, error) {
	const host = "retry-after.test"
	log, err := probeCrawl(s, siteConfig{Robots: map[string]string{host: ""}, TooMany: map[string]int{host: 1}, RetryAfter: 2},
		newCrawler, 50*time.Millisecond, host, pageURLs("http://"+host, 3))
	if err != nil {
		return "", false, err
	}
	for i, a := range log {
		if a.Status == http.StatusTooManyRequests {
			if i+1 == len(log) {
				return "no request after the 429", true, nil
			}
			gap := log[i+1].At - a.At
			return fmt.Sprintf("429 with Retry-After: 2 to the next request %.1fms", ms(gap)), gap >= 2*time.Second-arrivalSlack, nil
		}
	}
	return "no 429 was served", false, nil
}

// probeSchemes: http://host/robots.txt disallows /x/, https://host's allows
// everything; https://host/x/1 should be fetched after https's own file.
func probeSchemes(s *site, newCrawler func(time.Duration, []string) (crawler, error)) (string, bool, error) {
	const host = "schemes.test"
	cfg := siteConfig{Robots: map[string]string{"http://" + host: "User-agent: *\nDisallow: /x/\n", "https://" + host: ""}, Record: true}
	if err := s.configure(cfg); err != nil {
		return "", false, err
	}
	cr, err := newCrawler(0, []string{host})
	if err != nil {
		return "", false, err
	}
	if _, err := cr.crawl([]string{"http://" + host + "/page"}); err != nil {
		return "", false, err
	}
	if _, err := cr.crawl([]string{"https://" + host + "/x/1"}); err != nil {
		return "", false, err
	}
	log, err := s.arrivals()
	if err != nil {
		return "", false, err
	}
	httpsRobots := len(only(log, func(a arrival) bool { return a.Scheme == "https" && a.Path == "/robots.txt" }))
	httpsPage := len(only(log, func(a arrival) bool { return a.Scheme == "https" && a.Path == "/x/1" }))
	return fmt.Sprintf("https robots.txt fetched %d times, https /x/1 (disallowed by http's file only) fetched %d times", httpsRobots, httpsPage),
		httpsRobots == 1 && httpsPage == 1, nil
}

// probeCrawl serves cfg, crawls urls with a new crawler and returns what
// the site received for host, in order.
func probeCrawl(s *site, cfg siteConfig, newCrawler func(time.Duration, []string) (crawler, error), delay time.Duration, host string, urls []string) ([]arrival, error) {
	cfg.Record = true
	if err := s.configure(cfg); err != nil {
		return nil, err
	}
	cr, err := newCrawler(delay, []string{host})
	if err != nil {
		return nil, err
	}
	if _, err := cr.crawl(urls); err != nil {
		return nil, err
	}
	log, err := s.arrivals()
	if err != nil {
		return nil, err
	}
	return only(log, func(a arrival) bool { return a.Host == host }), nil
}

func pageURLs(prefix string, n int) []string {
	urls := make([]string, n)
	for i := range urls {
		urls[i] = fmt.Sprintf("%s/page/%d", prefix, i)
	}
	return urls
}

func only(log []arrival, keep func(arrival) bool) []arrival {
	var out []arrival
	for _, a := range log {
		if keep(a) {
			out = append(out, a)
		}
	}
	return out
}

// minGap returns the smallest gap between consecutive arrivals, which the
// site logs in order.
func minGap(log []arrival) time.Duration {
	gap := time.Duration(-1)
	for i := 1; i < len(log); i++ {
		if d := log[i].At - log[i-1].At; gap < 0 || d < gap {
			gap = d
		}
	}
	return gap
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
