package main

import (
	"context"
	"fmt"
	"html"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// demoTiming is the demo's clock: its defaults, or -fast.
type demoTiming struct {
	baseDelay        time.Duration // the transport's base delay
	crawlDelay       time.Duration // news's Crawl-delay
	slow             time.Duration // how long shop's slow pages take to answer
	retryAfter       int           // seconds: news's 429
	robotsRetryAfter int           // seconds: flaky's 503 robots.txt
	robotsTTL        time.Duration // the transport's robots.txt TTL
}

var (
	demoDefault = demoTiming{
		baseDelay:        300 * time.Millisecond,
		crawlDelay:       time.Second,
		slow:             400 * time.Millisecond,
		retryAfter:       8,
		robotsRetryAfter: 2,
		robotsTTL:        3 * time.Second,
	}
	// demoFast shrinks every delay the demo controls. Two cannot shrink:
	// the transport's first backoff pause is 5s to 7.5s whatever the
	// options, so Retry-After stays 8s to be the pause that binds; and the
	// robots.txt TTL must stay below that pause, so that flaky's robots.txt
	// is fetched again before any link found on flaky is.
	demoFast = demoTiming{
		baseDelay:        20 * time.Millisecond,
		crawlDelay:       100 * time.Millisecond,
		slow:             60 * time.Millisecond,
		retryAfter:       8,
		robotsRetryAfter: 1,
		robotsTTL:        3 * time.Second,
	}
)

// A demoSite is one host of the demo web.
type demoSite struct {
	name       string        // short name, also the {name} placeholder of links to it
	ip         string        // loopback address: the site's pacing key
	about      string        // what it exercises, for the demo's introduction
	crawlDelay time.Duration // the Crawl-delay its robots.txt sets for polite

	// robots answers the n-th fetch of robots.txt, from 1.
	robots func(n int) (status, retryAfter int, body string)
	pages  map[string]demoPage // by path
	// more serves paths that are not in pages, such as an endless trap.
	more func(path string) (demoPage, bool)
	// disallowed says whether the robots.txt above disallows a request URI
	// for the product token "polite". It is written by hand from the rules'
	// meaning, not with any robots.txt matcher, so that the verdict does not
	// trust the code it judges.
	disallowed func(requestURI string) bool
}

// A demoPage is a page of a demo site.
type demoPage struct {
	links []string // paths on the same site, or "{name}/path" on another
	slow  bool     // answers after demoTiming.slow
	busy  bool     // the first request gets 429 with Retry-After
	pdf   bool     // not HTML
}

// demoSites returns the three hosts of the demo web. Together they exercise
// every policy of the transport.
func demoSites(t demoTiming) []*demoSite {
	shop := &demoSite{
		name: "shop", ip: "127.0.0.1",
		about: fmt.Sprintf("Allow/Disallow with * and $; a link into an endless calendar it disallows; slow pages (%s)", t.slow),
		robots: static(`# shop: wildcards, $ and a crawler trap
User-agent: *
Disallow: /*?sort=
Disallow: /*.pdf$
Allow: /manuals/*.pdf$
Disallow: /calendar/
Allow: /calendar/$
`),
		pages: map[string]demoPage{
			"/":                  {links: []string{"/reviews/1", "/catalog/", "/catalog/?sort=price", "/manuals/", "/calendar/", "{news}/", "{flaky}/about"}},
			"/catalog/":          {links: []string{"/catalog/lamp", "/catalog/chair", "/catalog/?sort=name", "/catalog/lamp.pdf"}},
			"/catalog/lamp":      {links: []string{"/", "/manuals/lamp.pdf", "/catalog/lamp.pdf?download=1"}},
			"/catalog/chair":     {links: []string{"/", "/catalog/chair.pdf"}},
			"/manuals/":          {links: []string{"/manuals/lamp.pdf", "/manuals/chair.pdf"}},
			"/manuals/lamp.pdf":  {pdf: true},
			"/manuals/chair.pdf": {pdf: true},
			"/catalog/lamp.pdf":  {pdf: true},
			"/calendar/":         {links: []string{"/calendar/2026/01/"}},
			"/reviews/1":         {slow: true, links: []string{"/reviews/2"}},
			"/reviews/2":         {slow: true, links: []string{"/reviews/3"}},
			"/reviews/3":         {slow: true, links: []string{"/", "/about"}},
			"/about":             {links: []string{"/"}},
		},
		more: calendar,
		disallowed: func(uri string) bool {
			path, _, hasQuery := strings.Cut(uri, "?")
			switch {
			case strings.Contains(uri, "?sort="):
				return true // listings sorted another way are duplicates
			case strings.HasSuffix(uri, ".pdf"): // $: the URI must end there
				return !strings.HasPrefix(path, "/manuals/")
			case strings.HasPrefix(path, "/calendar/"):
				return path != "/calendar/" || hasQuery // $: only the calendar's front page
			}
			return false
		},
	}
	crawlDelay := strconv.FormatFloat(t.crawlDelay.Seconds(), 'f', -1, 64)
	news := &demoSite{
		name: "news", ip: "127.0.0.2", crawlDelay: t.crawlDelay,
		about: fmt.Sprintf(`a robots.txt group for "polite" with Crawl-delay: %s; a page that answers 429 with Retry-After: %d`,
			crawlDelay, t.retryAfter),
		robots: static(`# news: other robots keep out; polite has a group of its own
User-agent: *
Disallow: /

User-agent: polite
Crawl-delay: ` + crawlDelay + `
Disallow: /drafts/
`),
		pages: map[string]demoPage{
			"/":                {links: []string{"/live", "/2026/01/budget", "/drafts/scoop", "/2026/01/weather", "{shop}/"}},
			"/live":            {busy: true, links: []string{"/2026/01/budget"}},
			"/2026/01/budget":  {links: []string{"/2026/01/weather", "/drafts/budget-v2"}},
			"/2026/01/weather": {links: []string{"/", "/live"}},
		},
		disallowed: func(uri string) bool { return strings.HasPrefix(uri, "/drafts/") },
	}
	flakyRobots := static(`# flaky: this robots.txt answered 503 at first
User-agent: *
Disallow: /tmp/
`)
	flaky := &demoSite{
		name: "flaky", ip: "127.0.0.3",
		about: fmt.Sprintf("robots.txt answers 503 with Retry-After: %d once, then recovers", t.robotsRetryAfter),
		robots: func(n int) (int, int, string) {
			if n == 1 {
				return http.StatusServiceUnavailable, t.robotsRetryAfter, "down for maintenance\n"
			}
			return flakyRobots(n)
		},
		pages: map[string]demoPage{
			"/":           {links: []string{"/about", "/docs/", "/tmp/cache", "{shop}/"}},
			"/about":      {links: []string{"/"}},
			"/docs/":      {links: []string{"/docs/intro", "/docs/api", "/tmp/build"}},
			"/docs/intro": {links: []string{"/docs/"}},
			"/docs/api":   {links: []string{"/docs/"}},
		},
		disallowed: func(uri string) bool { return strings.HasPrefix(uri, "/tmp/") },
	}
	return []*demoSite{shop, news, flaky}
}

// static returns a robots function that always answers 200 with body.
func static(body string) func(int) (int, int, string) {
	return func(int) (int, int, string) { return http.StatusOK, 0, body }
}

// calendar serves the crawler trap: an endless calendar, each month linking
// to the next and the previous one.
func calendar(path string) (demoPage, bool) {
	var y, m int
	if _, err := fmt.Sscanf(path, "/calendar/%d/%d/", &y, &m); err != nil || m < 1 || m > 12 {
		return demoPage{}, false
	}
	next, prev := y*12+m, y*12+m-2 // months since year 0, of the next and previous month
	return demoPage{links: []string{
		fmt.Sprintf("/calendar/%d/%02d/", next/12, next%12+1),
		fmt.Sprintf("/calendar/%d/%02d/", prev/12, prev%12+1),
	}}, true
}

// demoWeb serves the demo sites and records, on the server side, every
// request that arrives and every Retry-After it sends.
type demoWeb struct {
	timing  demoTiming
	sites   map[string]*demoSite // by IP
	order   []*demoSite
	port    string
	virtual bool              // the sites share one listener on 127.0.0.1
	dial    map[string]string // address to dial for each site's address
	servers []*http.Server

	mu          sync.Mutex // guards the fields below
	arrivals    []arrival
	retryAfters []sentRetryAfter
	robotsN     map[string]int // robots.txt fetches by site IP
	busyDone    map[string]bool
}

// An arrival is a request as a demo server saw it arrive.
type arrival struct {
	site *demoSite
	uri  string
	at   time.Time
}

// A sentRetryAfter is a 429 or 503 with Retry-After that a demo server sent.
type sentRetryAfter struct {
	site       *demoSite
	uri        string
	status     int
	retryAfter time.Duration
	at         time.Time // taken before the answer was written: no later than it left
}

// startDemoWeb serves the sites on one port of 127.0.0.1, 127.0.0.2 and
// 127.0.0.3: port, or any free one when it is 0. Where those addresses
// cannot be bound (macOS has only 127.0.0.1), or when virtual is set, the
// sites share a listener on 127.0.0.1 and the demo's transport dials it for
// all three.
func startDemoWeb(t demoTiming, port int, virtual bool) (*demoWeb, error) {
	w := &demoWeb{
		timing:   t,
		sites:    make(map[string]*demoSite),
		order:    demoSites(t),
		dial:     make(map[string]string),
		robotsN:  make(map[string]int),
		busyDone: make(map[string]bool),
	}
	for _, s := range w.order {
		w.sites[s.ip] = s
	}
	first, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", fmt.Sprint(port)))
	if err != nil {
		return nil, err
	}
	_, w.port, _ = net.SplitHostPort(first.Addr().String())
	listeners := []net.Listener{first}
	if !virtual {
		for _, s := range w.order[1:] {
			ln, err := net.Listen("tcp", net.JoinHostPort(s.ip, w.port))
			if err != nil {
				virtual = true
				break
			}
			listeners = append(listeners, ln)
		}
	}
	if virtual {
		for _, ln := range listeners[1:] {
			ln.Close()
		}
		listeners = listeners[:1]
		for _, s := range w.order {
			w.dial[net.JoinHostPort(s.ip, w.port)] = first.Addr().String()
		}
	}
	w.virtual = virtual
	for _, ln := range listeners {
		srv := &http.Server{Handler: w, ReadHeaderTimeout: 10 * time.Second}
		w.servers = append(w.servers, srv)
		go srv.Serve(ln)
	}
	return w, nil
}

// Close stops the servers.
func (w *demoWeb) Close() {
	for _, srv := range w.servers {
		srv.Close()
	}
}

// url returns the base URL of site s, "http://ip:port".
func (w *demoWeb) url(s *demoSite) string {
	return "http://" + net.JoinHostPort(s.ip, w.port)
}

// transport returns the base transport for the demo: a plain one, which
// dials the shared listener for every site when the web is virtual.
func (w *demoWeb) transport() *http.Transport {
	d := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if to, ok := w.dial[addr]; ok {
				addr = to
			}
			return d.DialContext(ctx, network, addr)
		},
		MaxIdleConnsPerHost: 2,
		IdleConnTimeout:     30 * time.Second,
	}
}

// ServeHTTP implements http.Handler.
func (w *demoWeb) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	now := time.Now()
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		host = r.Host
	}
	site := w.sites[host]
	uri := r.URL.RequestURI()
	w.mu.Lock()
	w.arrivals = append(w.arrivals, arrival{site: site, uri: uri, at: now})
	w.mu.Unlock()
	if site == nil {
		http.NotFound(rw, r)
		return
	}

	if r.URL.Path == "/robots.txt" {
		w.mu.Lock()
		w.robotsN[site.ip]++
		n := w.robotsN[site.ip]
		w.mu.Unlock()
		status, ra, body := site.robots(n)
		if ra > 0 {
			w.sentRetryAfter(rw, site, uri, status, ra)
		}
		rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
		rw.WriteHeader(status)
		fmt.Fprint(rw, body)
		return
	}

	page, ok := site.pages[r.URL.Path]
	if !ok && site.more != nil {
		page, ok = site.more(r.URL.Path)
	}
	if !ok {
		http.NotFound(rw, r)
		return
	}
	if page.busy {
		w.mu.Lock()
		first := !w.busyDone[site.ip+uri]
		w.busyDone[site.ip+uri] = true
		w.mu.Unlock()
		if first {
			w.sentRetryAfter(rw, site, uri, http.StatusTooManyRequests, w.timing.retryAfter)
			http.Error(rw, "too many requests: come back later", http.StatusTooManyRequests)
			return
		}
	}
	if page.slow {
		select {
		case <-time.After(w.timing.slow):
		case <-r.Context().Done():
			return
		}
	}
	if page.pdf {
		rw.Header().Set("Content-Type", "application/pdf")
		fmt.Fprint(rw, "%PDF-1.4\n% a demo manual\n")
		return
	}
	rw.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprint(rw, w.render(site, r.URL.Path, page))
}

// sentRetryAfter sets a Retry-After of secs seconds on rw and records it,
// before the answer is written.
func (w *demoWeb) sentRetryAfter(rw http.ResponseWriter, site *demoSite, uri string, status, secs int) {
	rw.Header().Set("Retry-After", fmt.Sprint(secs))
	w.mu.Lock()
	w.retryAfters = append(w.retryAfters, sentRetryAfter{site: site, uri: uri, status: status,
		retryAfter: time.Duration(secs) * time.Second, at: time.Now()})
	w.mu.Unlock()
}

// render writes a page: a canonical link to itself, its links, and an
// image, which a crawler must not take for a link.
func (w *demoWeb) render(site *demoSite, path string, page demoPage) string {
	var b strings.Builder
	self := w.url(site) + path
	fmt.Fprintf(&b, "<!doctype html>\n<html><head><title>%s %s</title>\n", site.name, html.EscapeString(path))
	fmt.Fprintf(&b, "<link rel=\"canonical\" href=\"%s\">\n<link rel=\"stylesheet\" href=\"/style.css\">\n", html.EscapeString(self))
	fmt.Fprintf(&b, "</head><body>\n<h1>%s %s</h1>\n<img src=\"/logo.png\" alt=\"\">\n<ul>\n", site.name, html.EscapeString(path))
	for _, l := range page.links {
		href := l
		for _, s := range w.order {
			href = strings.Replace(href, "{"+s.name+"}", w.url(s), 1)
		}
		fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a></li>\n", html.EscapeString(href), html.EscapeString(l))
	}
	b.WriteString("</ul>\n</body></html>\n")
	return b.String()
}

// serverLog returns copies of what the servers recorded.
func (w *demoWeb) serverLog() ([]arrival, []sentRetryAfter) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]arrival(nil), w.arrivals...), append([]sentRetryAfter(nil), w.retryAfters...)
}
