// Package politeotel reports what a [polite.PoliteTransport] does through
// OpenTelemetry: on each request's own span, why it waited and why it was
// refused, with the robots.txt fetch it caused as a span of its own; and
// the figures of package politeprom as OpenTelemetry metrics.
//
//	tel, err := politeotel.New(mp) // mp: the program's metric.MeterProvider
//	if err != nil {
//		log.Fatal(err)
//	}
//	t := polite.New(nil, polite.WithUserAgent("MyBot/1.0 (+https://example.com/bot)"), tel.Option())
//	tel.Track(t)
//	client := &http.Client{Transport: otelhttp.NewTransport(t)}
//
// # Traces
//
// The span is the one in the request's context ([trace.SpanFromContext]):
// the client span of otelhttp.NewTransport around the transport, or the
// caller's own. When it is not recording (there is none, or it was not
// sampled), nothing is done. On it go these span events, each stamped with
// the time it happened:
//
//	polite.wait          a stretch of the wait before the request was sent, stamped at its start:
//	                     polite.wait.cause, what held it (below; none when the Pacer does not say),
//	                     polite.wait.duration, its length in seconds
//	polite.refused       the request was refused unsent, after the polite.wait events of what
//	                     held it up until then; polite.refusal.reason says why:
//	                     "robots.txt", with polite.robots.group and polite.robots.rule, or
//	                     polite.refusal.detail when no rule refused it (an unreachable file, a
//	                     path it does not decide); "usage", a usage preference, with
//	                     polite.usage.disallowed ("train-ai=n"), polite.robots.group and
//	                     polite.robots.rule; "deadline", the request's deadline falls before
//	                     its turn, with polite.wait.cause and polite.wait.duration, the wait it
//	                     would have needed, polite.deadline.remaining, the time left to the
//	                     deadline, in seconds, and polite.refusal.detail, the error
//	polite.would_refuse  robots.txt did not allow a request sent all the same (RobotsReport
//	                     mode, or FailOpen for a path it does not decide), as polite.refused says
//	polite.backoff       the request's response, or that of the robots.txt fetch it started,
//	                     changed its host's backoff: polite.backoff.level,
//	                     and when it rose polite.backoff.pause and polite.backoff.retry_after, in
//	                     seconds; http.response.status_code, or polite.backoff.error
//
// A wait's causes are those of [pace.Cause]: "pace", "crawl-delay",
// "backoff", "retry-after", "quota", "quota-spread", "rate-limit",
// "in-flight", "queue", "global-limit" and "robots.txt". A request that
// waited for nothing gets no event; one whose Pacer says no cause gets one
// polite.wait without polite.wait.cause, when it waited a millisecond or
// more for its turn.
//
// The robots.txt fetch that a request's turn started is a span of its own,
// polite.robots_fetch, a child of that request's span, from the fetch's
// start to its end: url.full, http.response.status_code (none when no
// response came), http.response.body.size (the bytes read),
// polite.robots.rules, and polite.robots.cached, true when the rules in
// force after it are a copy the transport had (a 304, or a failure that
// left the last good copy in force); a fetch that left the file
// unreachable has an error status. The requests that waited for the same
// fetch show it as a wait of cause "robots.txt". A copy that a
// [polite.RobotsStore] gives, fetched by another process, is no fetch of
// this transport's, and the requests that waited for it show only their
// wait.
//
// The span is created by the tracer provider of the request's span
// ([trace.Span.TracerProvider]), so that it goes wherever its parent goes.
//
// # Where it goes with otelhttp
//
// Around the transport, otelhttp.NewTransport(t) starts the client span
// before polite's wait: the span lasts as long as the caller waited, the
// wait and the refusal are events on it, and the robots.txt fetch is its
// child. This is the order that answers "why did this call take 4.9 s"
// (Example_otelhttpOutside).
//
// As the transport's base, polite.New(otelhttp.NewTransport(base), ...)
// starts the client span once the turn has come: the span covers the
// exchange with the server alone, as a network trace should, and polite's
// events go on the caller's span, the request's context's, if it has one
// (Example_otelhttpInside). The robots.txt requests go through otelhttp
// too; since a fetch serves every request that waits for it, its context
// is none of theirs, and otelhttp gives it a span in a trace of its own,
// from the global tracer provider.
//
// # Metrics
//
// The counters and the histogram come from the transport's events; the
// gauges are observed at each collection from [polite.PoliteTransport.Stats]
// of the transports given to [Telemetry.Track]. They are the figures of
// package politeprom, named by OpenTelemetry's conventions:
//
//	name                        instrument               unit        attributes                   politeprom's
//	polite.wait.duration        histogram                s                                        polite_wait_seconds, and its count polite_requests_total
//	polite.robots.disallowed    counter                  {request}   polite.action                polite_robots_disallowed_total
//	polite.usage.disallowed     counter                  {request}   polite.use, polite.action    polite_usage_disallowed_total
//	polite.backoffs             counter                  {backoff}   polite.retry_after           polite_backoffs_total
//	polite.robots.fetches       counter                  {fetch}     polite.robots.status_class,  polite_robots_fetches_total
//	                                                                 polite.robots.result
//	polite.hosts.evicted        counter                  {host}                                   polite_hosts_evicted_total
//	polite.unreadable_fields    counter                  {field}     polite.field                 polite_unreadable_fields_total
//	polite.hosts.tracked        observable up-down       {host}                                   polite_hosts
//	polite.hosts.paused         observable up-down       {host}                                   polite_hosts_paused
//	polite.requests.waiting     observable up-down       {request}                                polite_requests_waiting
//	polite.requests.in_flight   observable up-down       {request}                                polite_requests_in_flight
//
// The requests sent are counted by polite.wait.duration's count, as
// OpenTelemetry's conventions count HTTP requests by their duration's
// histogram: one measurement a request rather than two.
//
// polite.action is "refused", or "sent" in RobotsReport mode; polite.use a
// use declared with [polite.WithUsage], as "train-ai"; polite.retry_after
// a boolean, whether the signal carried a Retry-After;
// polite.robots.status_class "2xx" to "5xx", or "error" when no response
// came, and polite.robots.result "fetched" or "unreachable"; polite.field
// a rate-limit field's name, as "RateLimit-Reset". The histogram's
// buckets are politeprom's, from a millisecond to ten minutes. What each
// counts, and what it leaves out, is as politeprom's documentation says.
// A measurement made for a request is made with its context, so that an
// exemplar links it to the request's trace.
//
// No metric has a host label: a crawler meets hosts without bound, and
// each would add a series to every metric. One host's figures are in
// [polite.PoliteTransport.Stats].
//
// # Cost
//
// Without [Telemetry.Option], the transport pays nothing. With it, a
// request that does not wait costs what the transport's events cost (its
// URL as a string, a small record of its waits) and the two measurements;
// BENCHMARKS.md gives the figure. A span event is added only for what
// happened to the request, on a span that records.
package politeotel
