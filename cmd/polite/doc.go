// Polite is a robots.txt tester, a polite curl, a small crawler and a demo.
//
// Every request it makes goes through one
// [github.com/polite-go/polite.PoliteTransport]: it obeys the site's
// robots.txt (RFC 9309), waits for its host's turn, at a pace that adapts
// to the server's latency and the site's Crawl-delay, and backs off on 429,
// 5xx and Retry-After. The command uses only the public API of package
// polite.
//
// Usage:
//
//	polite check [-ua UA] [-delay D] [-robots FILE] URL...
//	polite get   [-ua UA] [-delay D] [-f] [-o FILE] URL...
//	polite crawl [-ua UA] [-delay D] [-max-pages N] [-max-depth N] [-concurrency N]
//	             [-same-host] [-idle-timeout T] [-retries N] [-timeline FILE.svg] URL...
//	polite demo  [-fast] [-timeline FILE.svg] [-v]
//	polite demo  -serve [-port N]
//
// Flags come before the URLs, and a URL is an absolute http or https URL.
// Every command sends the User-Agent
// "polite/1.0 (+https://github.com/polite-go/polite)" unless -ua gives
// another. The product token of the User-Agent, "polite" by default,
// chooses the robots.txt group that binds. -delay is the base delay, the
// least time between the starts of two requests to one host (1s by
// default, 0 for none; it must not be negative). A duration has a unit, as
// in 5s, 500ms or 1m30s; a bare number but 0 is an error that says so.
//
// # Check
//
// Check tests URLs against their site's robots.txt. For each URL it fetches
// the origin's robots.txt through the transport, and nothing else, and
// prints one line: allowed or blocked, the group that bound, the rule that
// decided, the origin's Crawl-delay and the pace that would apply:
//
//	allowed  http://127.0.0.1:8089/manuals/lamp.pdf  group *       rule "Allow: /manuals/*.pdf$"  crawl-delay none  pace 1s
//	blocked  http://127.0.0.1:8089/catalog/lamp.pdf  group *       rule "Disallow: /*.pdf$"       crawl-delay none  pace 1s
//	blocked  http://127.0.0.2:8089/drafts/scoop      group polite  rule "Disallow: /drafts/"      crawl-delay 1s    pace 1s
//
// After the verdicts, it lists the sitemaps of the robots.txt files it
// consulted, each once:
//
//	sitemap  https://example.com/sitemap.xml
//
// With -robots FILE it tests the local robots.txt FILE instead and sends
// nothing at all: a robots.txt tester for site owners. A URL may then be a
// bare path, which must start with "/", such as /private/x or /search?q=go.
// Once the arguments are known to be good, check first says on standard
// error whether FILE is robots.txt at all. When it is binary data (a NUL
// byte, or more than one byte in ten that is no text, in its first 8 KiB),
// an HTML or XML document, or text in UTF-16, or when none of its lines
// is robots.txt, every crawler reads it as allowing everything: check
// says so first, and exits with 2. Then it lists the lines of FILE that a
// crawler skips, with their numbers and why ("FILE:2: skipped, unknown
// field: "Disalow: /x""), a Sitemap line whose value is not an absolute
// http or https URL among them; of binary data or a document it gives
// only their number.
//
// # Get
//
// Get fetches URLs in turn, following redirects, and writes their bodies.
// The bodies go to standard output, or to FILE with -o. For each URL, get
// prints one line on standard error: the status, the time the request
// waited, the time the server took to answer and the size of the body; or
// why the URL was not fetched:
//
//	200      http://127.0.0.1:8089/reviews/1  waited 1.093s, answered in 403ms, 302 bytes
//	blocked  http://127.0.0.1:8089/calendar/2026/01/  http://127.0.0.1:8089/robots.txt (Disallow: /calendar/)
//
// The wait counts from the moment the URL was handed to the transport, so
// it includes the robots.txt fetch and the host's pace after it. A refused
// URL costs no request. With -f, an answer with a status of 400 or more is
// a failure, as with curl -f: its body is not written, and get exits
// with 22.
//
// # Crawl
//
// Crawl follows links from the URLs, through the transport. The transport
// honours robots.txt, Crawl-delay, backoff and Retry-After; the crawler
// knows nothing of them. The links of a page are its anchors and
// canonical links, resolved against its base URL, never images, scripts or
// stylesheets; a redirect's only link is its Location. The crawl follows
// links up to -max-depth steps (3) from the URLs given, and -same-host
// keeps it to their hosts. It stops after -max-pages requests (100;
// refusals by robots.txt do not count), when nothing is left to fetch, or
// when no new link has been found for -idle-timeout (30s). -idle-timeout 0
// means no idle timeout, for sites whose Crawl-delay or backoff is longer
// than any timeout would be: the crawl then stops only at -max-pages, when
// nothing is left, or when interrupted. The URLs wait in a frontier
// (package github.com/polite-go/polite/frontier), which hands each of the
// -concurrency workers (4) a URL of a host that the transport's Ready
// reports ready to start a request now, one per host at a time, so that
// workers sleep until a host is ready rather than wait in the transport;
// it fetches each host's robots.txt ahead of its first page, and drops the
// URLs robots.txt refuses before they take a worker's turn. A URL whose
// answer backs
// its host off (429, or 5xx but 501 and 505) is queued again up to
// -retries times (1), and is tried once the backoff is over.
//
// Crawl prints one JSON line per URL tried on standard output. A line has
// "blocked" and the rule when robots.txt refused the URL, and "error" when
// the request got no response:
//
//	{"url":"http://127.0.0.1:8089/","status":200,"links":["http://127.0.0.1:8089/reviews/1"],"depth":0}
//	{"url":"http://127.0.0.1:8089/catalog/?sort=price","status":0,"links":[],"depth":1,"blocked":"Disallow: /*?sort="}
//
// While standard error is a terminal, a line there shows the pages done,
// queued and blocked, and the hosts waiting for their turn. At the end,
// standard error gets a table with a row per host: the requests on the
// wire, robots.txt fetches included; the URLs refused; the statuses of
// robots.txt; the Crawl-delay; the pace, max(base delay, Crawl-delay); the
// least and the mean gap between two request starts; the backoffs; and
// whether each Retry-After was waited out. -timeline FILE.svg draws the
// request starts per host, with backoff pauses shaded and refusals marked.
//
// # Demo
//
// Demo crawls an embedded web of three hosts and checks that the crawl was
// polite. The hosts are 127.0.0.1, 127.0.0.2 and 127.0.0.3 on one port,
// three pacing keys; on a system without 127.0.0.2, such as macOS, all
// three are served on 127.0.0.1. Each exercises part of the policy:
//
//   - shop: Disallow: /*?sort=; Disallow: /*.pdf$ with
//     Allow: /manuals/*.pdf$; Disallow: /calendar/ with Allow: /calendar/$,
//     behind which lies an endless calendar, a crawler trap; and three
//     pages that take 400ms to answer, to which the pace must adapt.
//   - news: User-agent: * may fetch nothing, but polite has a group of its
//     own, with Crawl-delay: 1; /live answers 429 with Retry-After: 8 once.
//   - flaky: robots.txt answers 503 with Retry-After: 2 once, then
//     recovers with Disallow: /tmp/; until then the transport fails open.
//
// The demo crawls every page it can reach with crawl's crawler, three
// workers, through a transport with a base delay of 300ms and a robots.txt
// TTL of 3s instead of 24h, so that flaky's robots.txt, whose failure is
// kept for the smaller of the TTL and 5 minutes, is fetched again within
// the run. It prints a table as crawl does, then a verdict of five claims.
// Each is checked from what went on the wire, as recorded by the base
// transport the demo hands to polite.New, and from what the servers saw,
// never from what the transport says of itself; a claim with nothing to
// check it by fails.
//
//   - No disallowed URL was requested: neither the servers nor the wire saw
//     one, and every URL refused was disallowed, by a list of each site's
//     disallowed URLs written by hand (a test holds it equal to the
//     library's reading of the site's robots.txt).
//   - No gap was shorter than its pace: every two starts to a host on the
//     wire were at least max(base delay, Crawl-delay) apart, with the
//     Crawl-delay the demo wrote.
//   - Every Retry-After was waited out: by the server's clock, the next
//     request to the host arrived no sooner than it asked.
//   - The pace adapted to slow pages: after each slow answer, the next
//     start to its host came at least twice the answer's time later.
//   - The robots.txt that answered 503 recovered: it was fetched again,
//     answered 200, and its rules then refused URLs.
//
// -fast shrinks the delays the demo controls; the run, about 9s, is then
// bound by the transport's first backoff pause, 5s to 7.5s, which no option
// shortens. -v prints every request and refusal as it happened, and
// -timeline FILE.svg draws the crawl as crawl's does. With -serve, the demo
// only serves its web until interrupted, on -port N (any free port by
// default), to try the other commands on.
//
// # Interrupts
//
// The first SIGINT (Ctrl-C) or SIGTERM stops a command where it is, as
// Scrapy's first Ctrl-C does: the requests in flight are cancelled, none
// starts after them, and the command still reports what it did. Crawl
// writes its table and summary, the -timeline file, and "polite crawl:
// interrupted; URLs still to crawl: N" (those queued, and those whose
// request was cancelled). Get reports the URL it was fetching as
// "stopped", then how many URLs it did not fetch; check, the URLs it had
// decided. The demo writes its table and timeline, and no verdict. Each
// then exits with 130, as a shell reports a command that SIGINT ended;
// demo -serve, which serves until interrupted, exits with 0. A second
// SIGINT or SIGTERM exits with 130 at once, with nothing more written.
//
// # Exit status
//
// The check, get and crawl commands exit with 0 when every URL was
// allowed, 1 when robots.txt blocked any, and 2 on a usage or network
// error: for check, also a robots.txt that could not be fetched; for
// crawl, any request that got no response. With -f, get exits with 22
// when a URL answered with a status of 400 or more. The demo exits with 1
// when its verdict fails. A command that SIGINT (Ctrl-C) or SIGTERM stops
// exits with 130, once it has reported what it did.
//
// When URLs end differently, the gravest ending sets the status: a
// network error, then an HTTP error, then a refusal. A robots.txt that
// could not be fetched is one that answered 429 or 5xx, or got no
// response. For crawl, an answer with an HTTP error status, such as 404 or
// 503, is an answer and not an error; URLs that a stop by -max-pages or
// -idle-timeout leaves unfetched are not errors either. The demo exits
// with 2 when its web cannot start or the timeline cannot be written.
package main
