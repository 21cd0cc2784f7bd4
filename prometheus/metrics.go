// Package politeprom exports what a [polite.PoliteTransport] does as
// Prometheus metrics. It is named politeprom rather than prometheus so that
// it does not clash with client_golang's package prometheus, which its
// callers import beside it.
//
//	reg := prometheus.NewRegistry() // served by promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
//	m := politeprom.New(reg)
//	t := polite.New(nil, polite.WithUserAgent("MyBot/1.0 (+https://example.com/bot)"), m.Option())
//	m.Track(t)
//	client := &http.Client{Transport: t}
//
// The counters and the histogram come from the transport's events (see
// [polite.WithEvents]); the gauges are computed at each scrape from
// [polite.PoliteTransport.Stats]:
//
//	name                            type       labels          what it counts
//	polite_requests_total           counter                    requests passed to the base transport once their turn came
//	polite_wait_seconds             histogram                  how long each of those requests waited for its turn
//	polite_robots_disallowed_total  counter    action          requests robots.txt disallowed: action "refused", or "sent" in RobotsReport mode
//	polite_usage_disallowed_total   counter    use, action     requests whose robots.txt usage preference is "n" for a use declared with WithUsage, once per use: action "refused", or "sent" in RobotsReport mode
//	polite_backoffs_total           counter    retry_after     rises of a host's backoff level: retry_after "true" when the signal carried a Retry-After
//	polite_robots_fetches_total     counter    status, result  robots.txt fetches: status "2xx", "3xx", "4xx", "5xx", or "error" with no response; result "fetched" or "unreachable"
//	polite_hosts_evicted_total      counter                    hosts whose pacing state was dropped to keep within Limits.MaxKeys
//	polite_unreadable_fields_total  counter    field           rate-limit fields that could not be read, counted as the transport reports them: once per host and field
//	polite_hosts                    gauge                      hosts tracked: with pacing state or a cached robots.txt
//	polite_hosts_paused             gauge                      hosts paused now by a backoff or an exhausted rate limit
//	polite_requests_waiting         gauge                      requests waiting for their turn
//	polite_requests_in_flight       gauge                      requests started whose response headers have not come
//
// The buckets of polite_wait_seconds run from a millisecond, below which a
// request did not wait to speak of, to ten minutes, past a long
// Crawl-delay or backoff pause and a queue behind it: 0.001, 0.01, 0.1,
// 0.5, 1, 2, 5, 10, 30, 60, 120, 300 and 600 seconds.
//
// polite_requests_total counts neither robots.txt fetches, which
// polite_robots_fetches_total counts, nor refused requests, nor requests
// that gave up waiting, nor URLs other than http and https, which pass
// through untouched. A robots.txt fetch is counted once, however many
// redirects it followed; a 429 answer is "4xx" and "unreachable", a 404
// "4xx" and "fetched" (RFC 9309 §2.3.1.3 and §2.3.1.4). A refusal under
// [polite.FailClosed], for want of a robots.txt, is "refused" too; a
// request refused because its deadline falls before its turn counts in
// no metric.
//
// # Labels
//
// The use label of polite_usage_disallowed_total takes the uses that the
// transports declare with [polite.WithUsage], as "train-ai": a set the
// program bounds.
//
// No metric has a host label. A crawler meets hosts without bound, and
// each would add a series to every metric, kept by Prometheus long after the
// transport forgot the host. One host's figures are in
// [polite.PoliteTransport.Stats]; a program that wants them as metrics can
// label by something it bounds itself (a list of hosts it knows, a tenant)
// from a hook of its own.
//
// One Metrics may serve several transports, whose counts then add up. To
// keep them apart, give each its own Metrics, registered through
// [prometheus.WrapRegistererWith] with a label that names it; to rename
// the metrics, use [prometheus.WrapRegistererWithPrefix].
package politeprom

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/robotstxt"
	"github.com/prometheus/client_golang/prometheus"
)

// waitBuckets are the upper bounds of polite_wait_seconds' buckets, as the
// package documentation lists them.
var waitBuckets = []float64{0.001, 0.01, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600}

// Metrics holds the metrics of one or more transports. It is a
// [prometheus.Collector], safe for concurrent use.
type Metrics struct {
	requests   prometheus.Counter
	wait       prometheus.Histogram
	disallowed *prometheus.CounterVec
	refused    prometheus.Counter // disallowed{action="refused"}
	sent       prometheus.Counter // disallowed{action="sent"}
	usage      *prometheus.CounterVec
	backoffs   *prometheus.CounterVec
	backoffRA  prometheus.Counter // backoffs{retry_after="true"}
	backoffNo  prometheus.Counter // backoffs{retry_after="false"}
	robots     *prometheus.CounterVec
	evicted    prometheus.Counter
	unreadable *prometheus.CounterVec

	mu      sync.Mutex // guards tracked
	tracked []*polite.PoliteTransport
}

var (
	hostsDesc    = prometheus.NewDesc("polite_hosts", "Hosts the transports track: hosts with pacing state or a cached robots.txt.", nil, nil)
	pausedDesc   = prometheus.NewDesc("polite_hosts_paused", "Hosts paused now by a backoff or an exhausted rate limit.", nil, nil)
	waitingDesc  = prometheus.NewDesc("polite_requests_waiting", "Requests waiting for their host's turn.", nil, nil)
	inFlightDesc = prometheus.NewDesc("polite_requests_in_flight", "Requests started whose response headers have not come.", nil, nil)
)

// New returns the metrics, registered with reg; a nil reg registers
// nothing, for a caller that registers the Metrics itself. It panics, as
// [prometheus.Registerer.MustRegister] does, if reg already has metrics of
// these names and labels.
func New(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "polite_requests_total",
			Help: "Requests passed to the base transport once their host's turn came; robots.txt fetches excluded.",
		}),
		wait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "polite_wait_seconds",
			Help:    "How long each request waited for its host's turn.",
			Buckets: waitBuckets,
		}),
		disallowed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "polite_robots_disallowed_total",
			Help: `Requests robots.txt disallowed, by what the transport did: "refused", or "sent" in RobotsReport mode.`,
		}, []string{"action"}),
		usage: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "polite_usage_disallowed_total",
			Help: `Requests whose robots.txt usage preference disallowed a use the transport declared, once per use, by the use and what the transport did: "refused", or "sent" in RobotsReport mode.`,
		}, []string{"use", "action"}),
		backoffs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "polite_backoffs_total",
			Help: "Rises of a host's backoff level, by whether the signal carried a Retry-After.",
		}, []string{"retry_after"}),
		robots: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "polite_robots_fetches_total",
			Help: `robots.txt fetches, by status class ("error" when no response came) and result ("fetched" or "unreachable").`,
		}, []string{"status", "result"}),
		evicted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "polite_hosts_evicted_total",
			Help: "Hosts whose pacing state was dropped to keep within the transport's Limits.MaxKeys.",
		}),
		unreadable: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "polite_unreadable_fields_total",
			Help: "Rate-limit fields that could not be read, once per host and field, by the field's name.",
		}, []string{"field"}),
	}
	// Series that exist from the start read 0 rather than nothing.
	m.refused = m.disallowed.WithLabelValues("refused")
	m.sent = m.disallowed.WithLabelValues("sent")
	m.backoffRA = m.backoffs.WithLabelValues("true")
	m.backoffNo = m.backoffs.WithLabelValues("false")
	if reg != nil {
		reg.MustRegister(m)
	}
	return m
}

// Option returns the option that makes a transport report to m: its
// hook, given to [polite.WithEvents], counts every request from its
// [polite.EventSent] event. With a hook, every request costs a few hundred
// nanoseconds more and two allocations: its URL as a string, and the
// context that carries its wait log to the Pacer (BenchmarkRoundTrip).
func (m *Metrics) Option() polite.Option {
	return polite.WithEvents(m.observe)
}

// Track adds t to the transports whose state the gauges report. At each
// scrape, [Metrics.Collect] calls t.Stats, which takes time and memory in
// proportion to the hosts t tracks, a number that [polite.Limits]
// bounds. t is kept, and reported, for as long as m is.
func (m *Metrics) Track(t *polite.PoliteTransport) {
	m.mu.Lock()
	m.tracked = append(m.tracked, t)
	m.mu.Unlock()
}

// observe is the transport's hook.
func (m *Metrics) observe(ev polite.Event) {
	switch ev.Kind {
	case polite.EventSent:
		m.requests.Inc()
		m.wait.Observe(ev.Duration.Seconds())
	case polite.EventRefused, polite.EventWouldRefuse:
		if ev.Err != nil { // refused by its deadline, not by robots.txt
			return
		}
		if ev.Disallowed != (robotstxt.Usage{}) { // a usage preference's
			action := "refused"
			if ev.Kind == polite.EventWouldRefuse {
				action = "sent"
			}
			for use := range ev.Disallowed.All() {
				m.usage.WithLabelValues(string(use), action).Inc()
			}
		} else if ev.Kind == polite.EventRefused {
			m.refused.Inc()
		} else {
			m.sent.Inc()
		}
	case polite.EventBackoff:
		switch {
		case ev.Level == 0: // cleared
		case ev.RetryAfter > 0:
			m.backoffRA.Inc()
		default:
			m.backoffNo.Inc()
		}
	case polite.EventRobotsFetched:
		outcome := "fetched"
		if ev.Err != nil {
			outcome = "unreachable"
		}
		m.robots.WithLabelValues(statusClass(ev.Status), outcome).Inc()
	case polite.EventHostEvicted:
		m.evicted.Inc()
	case polite.EventUnreadableField:
		m.unreadable.WithLabelValues(ev.Field).Inc()
	}
}

// statusClass returns "2xx" for 200 to 299, and so on; "error" for 0, a
// fetch that got no response.
func statusClass(code int) string {
	if code < 100 || code > 599 {
		return "error"
	}
	return strconv.Itoa(code/100) + "xx"
}

// Describe implements [prometheus.Collector].
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range m.collectors() {
		c.Describe(ch)
	}
	ch <- hostsDesc
	ch <- pausedDesc
	ch <- waitingDesc
	ch <- inFlightDesc
}

// Collect implements [prometheus.Collector]. It computes the gauges from
// the Stats of every tracked transport; a transport whose Stats fail (a
// Pacer that a fleet shares, whose store is out of reach) makes the
// gauges an invalid metric with the error, which the registry reports.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	for _, c := range m.collectors() {
		c.Collect(ch)
	}
	m.mu.Lock()
	tracked := m.tracked[:len(m.tracked):len(m.tracked)]
	m.mu.Unlock()
	var hosts, paused, waiting, inFlight int
	now := time.Now()
	for _, t := range tracked {
		stats, err := t.Stats(context.Background()) // a shared Pacer bounds its reads by its own timeout
		if err != nil {
			ch <- prometheus.NewInvalidMetric(hostsDesc, err)
			return
		}
		for _, h := range stats {
			hosts++
			if h.PausedUntil.After(now) {
				paused++
			}
			waiting += h.Waiting
			inFlight += h.InFlight
		}
	}
	ch <- prometheus.MustNewConstMetric(hostsDesc, prometheus.GaugeValue, float64(hosts))
	ch <- prometheus.MustNewConstMetric(pausedDesc, prometheus.GaugeValue, float64(paused))
	ch <- prometheus.MustNewConstMetric(waitingDesc, prometheus.GaugeValue, float64(waiting))
	ch <- prometheus.MustNewConstMetric(inFlightDesc, prometheus.GaugeValue, float64(inFlight))
}

func (m *Metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.requests, m.wait, m.disallowed, m.usage, m.backoffs, m.robots, m.evicted, m.unreadable}
}
