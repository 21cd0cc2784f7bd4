// Package polite makes any Go HTTP client a good citizen of the web. Its
// [PoliteTransport] is an [http.RoundTripper] that wraps another one, the
// base, and before passing a request on it obeys the site's robots.txt and
// waits for the host's turn:
//
//	client := &http.Client{Transport: polite.New(nil, polite.WithUserAgent("MyBot/1.0 (+https://example.com/bot)"))}
//
// # robots.txt
//
// The transport fetches an origin's robots.txt (RFC 9309) lazily, on the
// first request to that origin, once however many requests arrive together;
// an origin is a scheme, host and port, so http and https are apart and
// "http://Example.com/" is "http://example.com:80/". The fetch goes through
// the base transport, carries the configured User-Agent and no header of the
// request that caused it, is paced like any request to its host (the page
// waits its turn after it), and each of its requests is bounded by
// [WithRobotsTimeout]; a caller that stops waiting does not cancel it for
// the others. What it finds:
//
//   - 2xx: the first 500 KiB are parsed and the rest ignored (§2.5). Lines
//     that cannot be read are skipped; the others still bind (§2.3.1.5).
//   - 3xx: up to 5 redirects are followed, to any http or https URL; the
//     rules found apply to the original origin (§2.3.1.2). A sixth redirect
//     means unavailable.
//   - 4xx other than 429: unavailable; every URL is allowed (§2.3.1.3).
//   - 429, 5xx, a network error or a timeout: unreachable. The host is backed
//     off as for any such answer, the failure is kept for the smaller of the
//     TTL and 5 minutes, and a previous good copy stays in force meanwhile.
//     With no good copy, [FailOpen] (the default) allows every URL and
//     [FailClosed] refuses every URL, as §2.3.1.4 asks.
//
// A file is used for [WithRobotsTTL], 24 hours by default (§2.4). The group
// that binds a request is the one naming the product token of its
// User-Agent ("MyBot" for "MyBot/1.0 (+https://example.com/bot)"), compared
// exactly and without regard to case; groups naming the same token are
// combined; with none, the "*" group binds; with no "*" group, nothing is
// disallowed (§2.2.1). A URL's escaped path and query are matched, with
// percent-encoding normalised on both sides; the longest matching rule
// wins, and Allow wins a tie (§2.2.2). /robots.txt itself is always allowed.
// A refused request never reaches the network: RoundTrip returns a
// [*RobotsBlockedError], which matches [ErrRobotsBlocked].
//
// # Pacing
//
// Requests are paced per host name, lower-cased, whatever the scheme and
// port. A request starts no sooner than
//
//	max(lastStart + pace·(1 + Jitter·U), blockedUntil)
//	pace = max(min(max(BaseDelay, 2·latency)·2^level, MaxDelay), min(CrawlDelay, MaxCrawlDelay))
//
// where U is uniform in [0,1) and drawn once per start, latency is a
// smoothed time to response headers (it rises at once and decays by
// halves), CrawlDelay is the robots.txt Crawl-delay of the request's group
// and level is the backoff level. At most [WithMaxInFlight] requests per
// host are in flight (one by default, until response headers arrive), and
// waiting requests start in the order they came.
//
// A 429, a 5xx other than 501 and 505, a timeout or a reset connection
// raises the level by one (once per incident: requests that started before
// the last rise do not raise it again, up to level 8) and pauses the whole
// host for 5s·2^(level−1), at most 10 minutes, jittered upward. A
// Retry-After header, in seconds or as an HTTP date measured against the
// response's Date header, is a floor on that pause, never a ceiling, and
// is capped at one hour. Five successes started after the last rise lower
// the level by one; 30 minutes without a signal forget it.
//
// Defaults: BaseDelay 1s, Jitter 0.5, MaxDelay 60s, MaxCrawlDelay 60s,
// MaxInFlight 1.
//
// # Errors and cancellation
//
// Waiting counts against the request's context, and so against
// [http.Client.Timeout]: a cancelled context returns its error at once,
// and a deadline that falls before the earliest allowed start fails at
// once with a [*DeadlineError], which matches [context.DeadlineExceeded].
// Responses, 429 and 503 included, are returned untouched and never
// retried; an error from the base transport is returned as it is.
// Through [http.Client], errors arrive wrapped in a [*url.Error], so test
// them with [errors.Is] and [errors.As].
//
// # Memory
//
// Pacing state is kept for at most [WithMaxHosts] hosts and robots.txt for
// as many origins; past that, idle hosts and old files are dropped, but
// never a host that is backed off, waited on or busy.
//
// URLs whose scheme is neither http nor https pass through untouched.
package polite
