// Package polite makes any Go HTTP client a good citizen of the web. Its
// [PoliteTransport] is an [http.RoundTripper] that wraps another one, the
// base, and before passing a request on it obeys the site's robots.txt and
// waits for the host's turn:
//
//	crawler := &http.Client{Transport: polite.New(nil, polite.WithUserAgent("MyBot/1.0 (+https://example.com/bot)"))}
//	sdk := &http.Client{Transport: polite.New(nil, polite.APIDefaults())}
//
// A crawler gets the whole policy below. A client of an API gets
// [APIDefaults]: robots.txt, which speaks to crawlers, is off, and nothing
// paces a host or caps its requests in flight until the server signals.
// The nested module sdk/ (package politesdk) has recipes for the SDKs of
// GitHub, AWS and OpenAI over the transport. Share one transport for the
// whole program: its state is what keeps the program polite.
//
// # Errors
//
// Responses, 429 and 503 included, are returned untouched and never
// retried. Otherwise RoundTrip returns one of these; through
// [http.Client] they arrive wrapped in a [*url.Error], so test them with
// [errors.Is] and [errors.As]:
//
//   - [*RobotsBlockedError], matching [ErrRobotsBlocked]: robots.txt
//     disallows the URL, or a usage preference of it disallows a use the
//     crawler declared ([WithUsage]), or the file does not decide the URL
//     (by default), or, under [FailClosed], the file is unreachable.
//     Nothing was sent.
//   - [*pace.DeadlineError], matching [context.DeadlineExceeded], a timeout:
//     the request's deadline falls before the earliest start it could get,
//     counting the requests queued ahead of it, a robots.txt fetch it
//     waits for and the global limiter; its Cause says which. It fails at
//     once rather than at its deadline.
//   - The context's error, when it is cancelled while the request waits:
//     waiting counts against the request's context, and so against
//     [http.Client.Timeout].
//   - [*ResolveError]: [WithPacingKeyIP] cannot resolve the host.
//     [*ConfigError], matching [ErrInvalidConfig]: [WithPacingFunc] gave
//     the key an invalid policy. Neither request is sent.
//   - Any other error is the base transport's, as it returned it; a base
//     that answers with neither a response nor an error makes one.
//
// Both refusals, [*RobotsBlockedError] and [*pace.DeadlineError], report
// RetryableError() false, which aws-sdk-go-v2's retryer asks, so that it
// stops at once; other retry policies must be told to stop on them
// (package politesdk's Refused): retrying is refused the same way.
//
// # robots.txt
//
// The transport fetches an origin's robots.txt (RFC 9309) lazily, on the
// first request to that origin, once however many requests arrive together.
// An origin is a scheme, host and port, so http and https are apart; the
// host is taken in one spelling (lower-cased, one trailing dot dropped, IP
// literals in their canonical form, international names in their ASCII
// form), so "http://Example.com./" is "http://example.com:80/". The fetch
// goes through the base transport (or [WithRobotsTransport]'s), to the URL
// as a browser writes it, with the configured User-Agent and no header of
// the request that caused it. It is paced like any request to its host, and
// the page waits its turn after it. [WithRobotsTimeout] bounds the whole
// fetch, redirects included, from the moment its first request may start,
// even through a base that does not heed its context.
// A caller that stops waiting does not cancel it for the others; when the
// last one stops before the fetch's first request has started, the fetch
// is called off, and a request whose deadline falls before that start, or
// whose context has ended, starts none. What it finds:
//
//   - 2xx: the first 500 KiB are parsed and the rest ignored (§2.5). Lines
//     that cannot be read are skipped; the others still bind (§2.3.1.5).
//   - 3xx: up to 5 redirects are followed, to any http or https URL; the
//     rules found apply to the original origin (§2.3.1.2). A sixth redirect
//     means unavailable. Nothing that the base adds reaches another host
//     (another scheme or port of the origin's host is the same server): a
//     redirect to one goes through [WithRobotsTransport]'s transport when
//     it is set, and through the base when that is an [*http.Transport],
//     which adds no header of its own. Through any other base it is not
//     followed, and the file is unreachable, with an error that names
//     WithRobotsTransport.
//   - 4xx other than 429: unavailable; every URL is allowed (§2.3.1.3).
//   - 429, 5xx, a network error, a timeout, or a base transport that panics
//     or answers without a response: unreachable. The host is backed off as
//     for any such answer, the failure is kept for the smaller of the TTL
//     and 5 minutes, and a previous good copy stays in force meanwhile. With
//     no good copy, [FailOpen] (the default) allows every URL and
//     [FailClosed] refuses every URL, as §2.3.1.4 asks.
//
// A file is used for [WithRobotsTTL], 24 hours by default (§2.4). The group
// that binds a request is the one naming the product token of its
// User-Agent ("MyBot" for "MyBot/1.0 (+https://example.com/bot)"), compared
// exactly and without regard to case; groups naming the same token are
// combined; with none, the "*" group binds; with no "*" group, nothing is
// disallowed (§2.2.1). The path and query the server receives are
// matched ([robotstxt.RequestPath]: a URL's escaped path and query, or the
// path of the request-target an Opaque URL holds, whose authority must be
// the URL's own and which must name a path), with percent-encoding
// normalised on both sides; the longest matching rule wins, and Allow
// wins a tie (§2.2.2). /robots.txt itself is always allowed.
// A path that the engine does not decide against rules (longer than
// [github.com/polite-go/polite/robotstxt.MaxPathLength], or against a file
// written to defeat it; package robotstxt says which) is refused, and
// counted ([HostStats].Undecided): the rules may disallow it. The second
// policy of [WithRobotsFailure] sends it instead, with an
// [EventWouldRefuse] that says why.
// A refused request never reaches the network: RoundTrip returns a
// [*RobotsBlockedError], which matches [ErrRobotsBlocked]. Package
// [robotstxt] gives the same reader and matcher without a transport, and
// [PoliteTransport.Robots] the file in force for an origin. An expired
// file is revalidated with its ETag and Last-Modified, and a 304 keeps it;
// a Cache-Control max-age shorter than the TTL shortens its life, to a
// minute at least.
//
// What robots.txt does is a [RobotsMode]: [RobotsEnforce] (the default),
// [RobotsReport], which decides and counts but sends every request, or
// [RobotsOff]. [WithRobotsMode] sets it for the transport, and for named
// hosts (RobotsOff for the API a program calls, say); and
// [ContextWithRobotsMode] per request, over both.
//
// A crawler that declares its uses with [WithUsage] (training AI models,
// a search index, input to a model as it answers) is held to the usage
// preferences of robots.txt too: the Content-Usage rules of
// draft-ietf-aipref-attach-05 and the Content-Signal lines of Cloudflare's
// Content Signals Policy, which package [robotstxt] reads. A URL whose
// preference is "n" for a declared use is refused with a
// [*RobotsBlockedError] whose Uses name it, or counted in [RobotsReport] mode.
// [PoliteTransport.ResponseUsage] adds a response's own fields.
//
// # Pacing
//
// Requests are paced per key by a [pace.Pacer], by the policy that package
// [pace] states: a base delay, the robots.txt Crawl-delay (of the group
// that binds the request, clamped), the server's latency, and backoff on
// the server's signals. [WithPacing] sets the policy, a [pace.Policy],
// each field's documentation giving its default and why; [WithPacingRules]
// and [WithPacingFunc] give some keys a policy of their own. The
// transport turns each response into a [pace.Outcome]:
//
//   - A 2xx is a success; a 429, a 5xx other than 501 and 505, any other
//     4xx or 5xx that carries a Retry-After (GitHub's secondary rate limit
//     is a 403 with one), a timeout or a reset connection is a signal to
//     back off; the rest, a 403 without a Retry-After included ("forbidden"),
//     is neutral. The caller's cancellation is ignored, and its deadline
//     neutral.
//   - Retry-After is read in seconds or as an HTTP date measured against
//     the response's Date header, and Retry-After-Ms (OpenAI's) in
//     milliseconds, first.
//   - Rate-limit fields: any response's RateLimit and RateLimit-Policy
//     (draft-ietf-httpapi-ratelimit-headers; RateLimit also as the
//     dictionary of its version 07, "limit=10, remaining=0, reset=2"),
//     RateLimit-Remaining and RateLimit-Reset (its versions up to 06),
//     X-RateLimit-Remaining and X-RateLimit-Reset (seconds, or a Unix
//     time; GitHub's X-RateLimit-Resource names the quota's partition), or
//     OpenAI's X-RateLimit-Remaining-Requests and -Tokens with their
//     resets as durations ("6m0s"; the tighter binds) make the
//     [pace.Quota] that slows the key before it answers 429. Fields that
//     are missing or malformed are ignored; a field that cannot be read is
//     reported once per key, as an [EventUnreadableField].
//   - A 429 with neither a Retry-After nor rate-limit fields is
//     RateLimited: the server keeps a limit it does not state, and the
//     Pacer learns it from such 429s (see package pace).
//
// The key is by default the host name, whatever the scheme and port.
// [WithPacingKey] chooses another: [PacingKeyOrigin] (scheme, host and
// port), [PacingKeyDomain] (the registrable domain, by the Public Suffix
// List) or a function of the URL; [WithPacingKeyIP] paces by the address
// the host resolves to, so that the sites of one server share one pace.
// [WithQuotaPartition] names the quota partition a request spends
// ([QuotaPartitionCredentials]: a hash of its credentials, so that one API
// token's empty quota holds no other token's call). A key's MaxBandwidth
// caps the bytes a second read from its response bodies, all of them
// together, in each process.
//
// # Memory
//
// Pacing state is kept for at most MaxKeys keys (see package pace),
// robots.txt for at most
// MaxOrigins origins within RobotsCacheBytes, and the addresses of the IP
// key for at most MaxResolved names: the fields of
// [Limits], which [WithLimits] sets. Past the bound, keys
// with nothing left to enforce are dropped first, then keys whose pause
// and pace are over (forgetting a remembered backoff level), but never a
// key that is paused, waited on or busy, nor one before any Crawl-delay it
// may ask for has passed; the table comes back under its bound soon after
// a burst has passed. Old robots.txt files are dropped, but never one
// being fetched.
//
// # Options
//
// Options are applied in order, and for every setting the last one wins;
// [WithPacing] and [WithLimits] set only the fields they are given, so
// options after [APIDefaults] override what it sets and options before it
// lose only that. An option given an invalid value makes [New] panic with
// a [*ConfigError] naming the option and field, which matches
// [ErrInvalidConfig]; [Validate] returns it instead. The defaults:
//
//   - [WithUserAgent]: none, so Go's; its product token chooses the
//     robots.txt group.
//   - [WithPacing]: [pace.Policy]'s fields give theirs; [WithPacingRules]
//     and [WithPacingFunc]: one policy for every key.
//   - [WithPacingKey]: [PacingKeyHost]. [WithQuotaPartition]: one
//     partition per key.
//   - [WithRobotsTTL]: 24 hours, the most RFC 9309 §2.4 allows.
//     [WithRobotsTimeout]: 10 seconds for the whole fetch.
//     [WithRobotsFailure]: [FailOpen] for an unreachable file, [FailClosed]
//     for a URL it does not decide. [WithRobotsMode]: [RobotsEnforce].
//     [WithRobotsTransport]: the base.
//   - [WithLimits]: [Limits]' fields give theirs.
//   - [WithEvents], [WithLogger]: none; with neither, events cost nothing.
//   - [WithPacer]: the in-memory Pacer, [pace.NewMemory]. [WithRobotsStore]: none, each
//     transport fetches its own. [WithGlobalLimiter]: none.
//
// # Extending
//
// [WithEvents] and [WithLogger] receive what the transport does (see
// [Event]), outside its locks: each request's events carry its context,
// and the request sent says what held it up ([Event].Waits), so that a
// hook can report on the request's own trace span, as the nested module
// otel/ (package politeotel) does for OpenTelemetry and prometheus/
// (package politeprom) counts for Prometheus. [PoliteTransport.Check] decides a request
// without sending it, [PoliteTransport.Ready] says what Check would and
// when the request could start, without fetching or reserving anything,
// and [PoliteTransport.Stats] returns a snapshot of every key.
//
// A fleet of processes shares one pace per key by partitioning its URLs by
// [PoliteTransport.PacingKey], or through a [pace.Pacer] that they share,
// plugged in with [WithPacer]; a [RobotsStore] that they share, plugged in
// with [WithRobotsStore], has each origin's robots.txt fetched once for
// them all. The nested module redis/ (package politeredis) gives both on
// Redis. The transport is a client of the Pacer interface, its own
// in-memory Pacer included, through the same methods as any other: it
// acquires a [pace.Lease] for every request, robots.txt fetches included,
// releases it with the request's Outcome, and tells the Pacer what
// Crawl-delay a robots.txt fetch found ([pace.Pacer.RobotsRead]); it
// reports what a release changed, and the keys a Pacer evicts, as events,
// and shows a [pace.ReadyPacer]'s and a [pace.StatsPacer]'s state in
// Ready, Check and Stats. Package politetest holds another Pacer or
// RobotsStore to the same cases as the in-memory ones.
//
// URLs whose scheme is neither http nor https pass through untouched.
package polite
