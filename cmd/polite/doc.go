// Polite is a robots.txt tester, a polite curl, a small crawler, a demo,
// and an auditor of access logs.
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
//	polite check [-ua UA] [-delay D] [-use USES] [-robots FILE] URL...
//	polite get   [-ua UA] [-delay D] [-f] [-o FILE] URL...
//	polite crawl [-ua UA] [-delay D] [-max-pages N] [-max-depth N] [-concurrency N]
//	             [-same-host] [-sitemaps] [-idle-timeout T] [-retries N] [-timeline FILE.svg] URL...
//	polite demo  [-fast] [-timeline FILE.svg] [-v]
//	polite demo  -serve [-port N]
//	polite audit -robots [DATE=]FILE... [-format text|json|csv] [-fail-on TOKEN] [-timeline DIR]
//	             [-use TOKEN=USES] [-retry-after D] [-one-host] [-fields NAME=KEY,...] [LOG...]
//
// Flags come before the URLs, and a URL is an absolute http or https URL.
// Every command sends the User-Agent
// "polite/1.0 (+https://github.com/polite-go/polite)" unless -ua gives
// another. The product token of the User-Agent, "polite" by default,
// chooses the robots.txt group that binds. -delay is the base delay, the
// least time between the starts of two requests to one host (1s by
// default, 0 for none; it must not be negative). A duration has a unit, as
// in 5s, 500ms or 1m30s; a bare number but 0 is an error that says so.
// A value that a command cannot use, a flag's or an argument's, or a file
// that it cannot read, is reported alone; a malformed command line (an
// unknown flag, a flag after the arguments, no argument) is reported with
// the command's usage.
//
// # Check
//
// Check tests URLs against their site's robots.txt. For each URL it fetches
// the origin's robots.txt through the transport, and nothing else, and
// prints one line: allowed or blocked, the group that bound with the
// numbers of its user-agent lines, the rule that decided with its line,
// the origin's Crawl-delay and the pace that would apply:
//
//	allowed  http://127.0.0.1:8089/manuals/lamp.pdf  group * (line 2)       rule "Allow: /manuals/*.pdf$" (line 5)  crawl-delay none  pace 1s
//	blocked  http://127.0.0.1:8089/catalog/lamp.pdf  group * (line 2)       rule "Disallow: /*.pdf$" (line 4)       crawl-delay none  pace 1s
//	blocked  http://127.0.0.2:8089/drafts/scoop      group polite (line 5)  rule "Disallow: /drafts/" (line 7)      crawl-delay 1s    pace 1s
//
// A Crawl-delay longer than the transport honours (a minute) is shown as
// written and then as honoured: "crawl-delay 2m0s (capped at 1m0s)".
//
// A URL whose robots.txt group states usage preferences for it (a
// Content-Usage rule of draft-ietf-aipref-attach-05, or a Content-Signal
// line of Cloudflare's Content Signals Policy) gets a column more, as
// "usage train-ai=n, search=y". With -use USES, the crawler's uses
// separated by commas (train-ai, search, ai-input or any other label), a
// URL whose preference is n for one of them is blocked, as the transport's
// WithUsage refuses it, and the line says which lines of robots.txt state
// it:
//
//	blocked  http://127.0.0.1:8089/reviews/1  group * (line 2)  rule none  crawl-delay none  pace 1s  usage train-ai=n  (-use: train-ai=n, as "Content-Usage: train-ai=n")
//
// After the verdicts, it lists the usage lines of each group of the
// robots.txt files it consulted, with the group's names, and the
// sitemaps, each once; when it consulted several files, a usage line ends
// with its file's URL:
//
//	usage    group *  "Content-Usage: train-ai=n"
//	usage    group *  "Content-Signal: search=yes, ai-train=no"
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
// refusals by robots.txt do not count), when nothing is left to fetch (no
// URL queued, and no request under way that could find more), or when no
// request has started or ended for -idle-timeout (30s): requests that
// hang, or hosts that the transport holds back for longer than that.
// -idle-timeout 0 means no idle timeout, for sites whose Crawl-delay or
// backoff is longer than any timeout would be: the crawl then stops only
// at -max-pages, when nothing is left, or when interrupted. The URLs wait in a frontier
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
// -sitemaps seeds the crawl also with the pages that the sitemaps of each
// URL's origin list (package github.com/polite-go/polite/sitemap): those
// its robots.txt names, or /sitemap.xml when it names none, and the
// sitemaps their indexes list. They are fetched through the transport,
// paced with the host's pages and refused where robots.txt disallows
// them, while the workers crawl; their pages are queued as they are read,
// at most 1,000 waiting in the frontier at once, as seeds that no one gave
// (depth 0, "sitemap":true in their lines). A sitemap that cannot be read
// is named on standard error, and the crawl goes on. -max-pages counts
// pages; the sitemaps' fetches, like robots.txt's, are in the table's
// requests.
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
// # Audit
//
// Audit checks the crawlers of access logs against the site's robots.txt.
// It tells a site's owner which crawlers obey it. It reads each LOG in turn,
// or standard input, as "-" or when no LOG is given, gunzipping a log that
// starts as gzip does, whatever its name; it sends nothing. For each
// crawler it reports the requests and the bytes sent, and the requests
// that broke a rule:
//
//   - disallowed: a URL that the group binding the crawler disallows, with
//     the rule that most requests broke (robots.txt itself is always
//     allowed);
//   - too soon: a start less than the group's Crawl-delay after the
//     crawler's previous start on the same host;
//   - in 429/503 pause: a start inside the pause that a 429 or 503 to the
//     crawler, from the same host, asked for;
//
// and how often it fetched robots.txt: never, or how many times, with the
// mean time between two fetches to one host.
//
// With -use TOKEN=USES, the crawler named TOKEN declares its uses,
// separated by commas (train-ai, search, ai-input or any other label;
// *=USES for every crawler), and the report has a column more, usage_pref:
// the requests for a URL that the crawler may fetch and whose robots.txt
// usage preference, in the group that binds it (its Content-Usage rules
// and Content-Signal lines, as check reads them), is n for one of them,
// with the lines that say so. A crawler's word for its uses is its
// operator's to give: audit cannot tell what a crawler does with what it
// fetched.
//
// A line is in the Common or the Combined Log Format (nginx's and Apache's
// default), either with a virtual host in front (nginx's "$host
// $remote_addr - ...", Apache's vhost_combined "%v:%p %h %l %u %t ..."),
// or a JSON object. Fields after the User-Agent are ignored. A JSON line
// names its fields with nginx's variable names, Caddy's, the Elastic
// Common Schema's or plain ones ("time", "user_agent", "request" or
// "path", "status", "bytes", "host"); -fields maps others, as
// -fields time=when,ua=client.agent, where a dot descends into an object.
// Its time is RFC 3339, the Common Log Format's, or Unix seconds. A line
// that cannot be read, or is longer than 64 KiB, is counted and shown by
// its log and number, and the reading goes on.
//
// A log line's crawler is named by its User-Agent, by this rule. A word
// is a run of letters, digits, '_' and '-', compared without regard to
// case.
//
//  1. The first word that a group of a -robots file names: "Mozilla/5.0
//     (compatible; Googlebot/2.1; +http://www.google.com/bot.html)" is
//     googlebot when a group names Googlebot. A crawler that sends its
//     product token first, the engine's own rule, is named by it.
//  2. Otherwise its product token, the first word, unless it is Mozilla
//     or Opera: "curl/8.5.0" is curl.
//  3. Otherwise the product after "compatible;", its first word whatever
//     follows it, unless it is a browser's (MSIE, Konqueror) or a
//     platform (Windows, Win32, Win64, Linux, Macintosh, X11, Android, U):
//     "Mozilla/5.0 (compatible; YandexBot/3.0)" is yandexbot, and
//     "Mozilla/4.5 (compatible; HTTrack 3.0x; Windows 98)" is httrack.
//  4. Otherwise the first word with "bot", "crawl", "spider" or "slurp"
//     in it, one followed by '/' first.
//  5. Otherwise a browser: every browser is one row, (browsers), counted
//     and not judged, since robots.txt binds crawlers and not people. A
//     line with no User-Agent is the row (no user-agent), and is judged.
//
// A crawler named by a group's token is bound by that group, and any other
// by the "*" group, or by none when the file has no "*" group. After the
// first 5,000 crawlers, new names share the row (other agents), judged for
// disallowed URLs only. Names are the User-Agents as sent: any client can
// send any, and a "Googlebot" line may be forged. The audit verifies
// no one's identity, and says so in every report; a later flag may check
// a crawler's addresses.
//
// Times are known to their precision only, a second in the Common Log
// Format, and a request counts only when it broke the rule whatever the
// fractions lost. A gap counts when the gap seen and the precision
// together are no more than the Crawl-delay: two starts within one second
// break a Crawl-delay of 1s, and starts two seconds apart break none of
// 2s. A request is in a pause when it started at least the precision after
// the answer that asked for it, so not while that answer was on its way,
// and before the pause ended.
//
// The time of a line is taken as the request's start, as Apache's %t is:
// the Common and the Combined Log Format carry no duration. nginx's
// $time_local is when the answer ended, so that a slow answer makes the
// gap before it look shorter than it was, short enough at times to count
// as too soon. A JSON line may carry the request's duration in seconds,
// as "request_time" (nginx's $request_time) or "duration" (Caddy's), or
// under the key of -fields duration=KEY: its time is then the answer's,
// and its start that time less the duration. Such a server writes a slow
// answer's line after the lines of requests that started later, so audit
// judges the starts in the order they happened: a request waits, unjudged,
// until the lines read show that no request still to come can have
// started before it, which takes the longest duration seen so far, at most
// 5 minutes, with at most 8 MiB of requests waiting. A request longer than
// any before it, or than 5 minutes, or let through early when the 8 MiB
// are full, may be judged after starts that came later. Logs are read in
// the order given, so rotated logs are given oldest first, as
// access.log.2.gz access.log.1 access.log. A start judged after the
// crawler's latest on the host is measured from that latest: an order
// that audit could not restore can hide gaps, never make them up.
//
// The pause that a 429 or 503 asks for is its Retry-After, when the line
// records one (the JSON field retry_after: seconds or an HTTP-date), and
// otherwise -retry-after: 5s by default, the least pause the transport of
// this module takes after a 429 or 503 without one. A 429 or 503 inside a
// pause makes it last to the end of its own.
//
// Gaps and pauses are judged per crawler and host. The host is the line's
// virtual host, or its JSON host, without the port, or the host of an
// absolute request-target; lines that name none are one host, "-", as
// every line is with -one-host. The robots.txt files apply to every host
// of the logs: audit the lines of sites with different files apart.
//
// -robots FILE is the site's robots.txt. A robots.txt that changed is
// several -robots DATE=FILE, each in force from its DATE, 2006-01-02
// (midnight UTC) or an RFC 3339 time, until the next one's; a FILE without
// a date is in force from the start. When every file has a date, the lines
// before the first are judged as on a site with no robots.txt: every URL
// is allowed, and no Crawl-delay applies.
//
// The report is a table of the first 50 crawlers, those that robots.txt
// binds first, ranked by their violations, then by their requests, and the
// browsers; the first 3 violations of each kind for each of the first 20,
// with their log, line, time, host, request-target and what they broke;
// and the first 20 lines that could not be read. -format json writes it as one JSON object, examples
// included, and -format csv as a row per crawler. -timeline DIR writes
// the timelines of the first 20 crawlers to DIR, as NAME.svg, in the
// style of crawl's: a lane per host, a tick per request, coloured by its
// status, a band over each pause that a 429 or 503 asked for, and a mark
// above each violation. A timeline keeps at most 2,000 requests and 500
// violations and 429s or 503s of a crawler, spread evenly over all of
// them.
//
// Memory stays bounded whatever the logs' size: the audit keeps counts per
// crawler, the state of each crawler on each host while a gap or a pause
// may still depend on it, a bounded cache of the engine's decisions by
// group and path, and the requests waiting for their turn. While standard
// error is a terminal, a line there shows how far the reading has come.
// With -fail-on TOKEN, repeated or with commas, audit exits with 1 when
// the crawler named TOKEN broke a rule, or, with *, any crawler that
// robots.txt binds: for CI and cron.
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
// decided. The demo writes its table and timeline, and no verdict. Audit
// writes its report and timelines of the lines read, then "polite audit:
// interrupted at LOG:N". Each
// then exits with 130, as a shell reports a command that SIGINT ended;
// demo -serve, which serves until interrupted, exits with 0. A second
// SIGINT or SIGTERM exits with 130 at once, with nothing more written.
//
// # Exit status
//
// The check and get commands exit with 0 when every URL was allowed, 1
// when robots.txt blocked any, and 2 on a usage or network error: for
// check, also a robots.txt that could not be fetched. With -f, get exits
// with 22 when a URL answered with a status of 400 or more. Crawl exits
// with 0 when it fetched a URL it was given, whatever the answer and
// whatever it met after it. When it fetched none, it exits with 1 if
// robots.txt refused them all, and with 2 otherwise: a request that got
// no response, or a stop before any answer. It also exits with 2 on a
// usage error, or when its output or -timeline file cannot be written.
// The demo exits with 1 when its verdict fails. Audit exits with 1 when a crawler that
// -fail-on names broke a rule, and with 2 when a log or a robots.txt
// cannot be read. A command that SIGINT (Ctrl-C) or SIGTERM stops exits
// with 130, once it has reported what it did.
//
// For check and get, when URLs end differently, the gravest ending sets
// the status: a network error, then an HTTP error, then a refusal. A
// robots.txt that could not be fetched is one that answered 429 or 5xx,
// or got no response. For crawl, the refusals and the failed requests of
// the URLs it found are in its output and its table, and not in its
// status, which is for a script to tell a crawl that did its work from
// one that could not start: a normal polite crawl meets refusals. An
// answer with an HTTP error status, such as 404 or 503, is an answer and
// not an error; URLs that a stop by -max-pages or -idle-timeout leaves
// unfetched are not errors either. When no URL given could be fetched,
// crawl says so on standard error. The demo exits with 2 when its web
// cannot start or the timeline cannot be written.
package main
