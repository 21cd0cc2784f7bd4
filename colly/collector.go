package politecolly

import (
	"context"
	"io"
	"net/http"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/polite-go/polite"
)

// Options configure [NewCollector]. The zero value is valid.
type Options struct {
	// Base is the transport under polite; nil means [http.DefaultTransport].
	Base http.RoundTripper
	// Timeout bounds each request from when polite passes it on to the
	// network until its response body is closed, and each redirect on its
	// own; 0 means no deadline but the collector's Context.
	Timeout time.Duration
	// Polite are the PoliteTransport's options, applied after
	// polite.WithUserAgent(userAgent).
	Polite []polite.Option
}

// NewCollector returns a gocolly/colly v2 collector whose requests go
// through a PoliteTransport over o.Base, and returns that transport too,
// for its Stats, Check and Ready. colly needs four settings to leave
// politeness to polite, and NewCollector makes them:
//
//   - One User-Agent for both: the collector's UserAgent for the header
//     colly puts on every request, polite.WithUserAgent(userAgent) for polite's
//     robots.txt fetches. polite chooses a request's robots.txt group by
//     the product token of the request's own User-Agent, and colly always
//     sets one: left at colly's default, "colly - https://github.com/gocolly/colly",
//     the group for "colly" or "*" binds, whatever WithUserAgent says.
//   - colly's robots.txt handling off (IgnoreRobotsTxt): polite decides.
//     colly's own check would fetch each robots.txt a second time, through
//     polite but as a page, and apply it by colly's reading.
//   - No colly LimitRule: polite paces each host. A LimitRule's Delay would
//     be slept after each response, on top of polite's pace.
//   - No http.Client.Timeout, which colly sets to 10s. It counts the wait
//     for the host's turn, so that a Crawl-delay longer than it times out
//     every request after the first, and it costs any transport that wraps
//     another 7 to 12% of loopback throughput (the repository's
//     BENCHMARKS.md). Instead, each request gets a deadline o.Timeout
//     ahead on its context (none when it is 0), counted from when polite
//     passes it on to the network
//     until its body is closed, and each redirect its own. colly has no
//     context per request (Collector.Context is one for all of them), so a
//     transport sets the deadline; it sits under polite, not over it, so
//     that the deadline bounds the server and not the queue. The wait is
//     bounded by polite's own limits (pace.Policy's MaxCrawlDelay and
//     MaxBackoff) and
//     ends when the collector's Context does. A request that times out
//     backs its host off, as any timeout does.
//
// UserAgent and IgnoreRobotsTxt are set after the collector is built:
// colly's COLLY_USER_AGENT and COLLY_IGNORE_ROBOTSTXT environment
// variables override the options colly.UserAgent and colly.IgnoreRobotsTxt.
// The collector is synchronous, as colly's are by default; [Crawl] runs
// it concurrently over a frontier, or set its Async field, and polite
// keeps each host to its pace.
//
// NewCollector panics, as [polite.New] does, when an option is invalid;
// [polite.Validate] reports it instead.
func NewCollector(userAgent string, o Options) (*colly.Collector, *polite.PoliteTransport) {
	base := o.Base
	if base == nil {
		base = http.DefaultTransport
	}
	if o.Timeout > 0 {
		base = &deadlineTransport{base: base, timeout: o.Timeout}
	}
	t := polite.New(base, append([]polite.Option{polite.WithUserAgent(userAgent)}, o.Polite...)...)
	c := colly.NewCollector()
	c.UserAgent = userAgent
	c.IgnoreRobotsTxt = true
	c.SetRequestTimeout(0)
	c.WithTransport(t)
	return c, t
}

// deadlineTransport gives each request a deadline timeout ahead on its
// context, from the call to its base until the response body is closed.
type deadlineTransport struct {
	base    http.RoundTripper
	timeout time.Duration
}

func (d *deadlineTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(req.Context(), d.timeout)
	resp, err := d.base.RoundTrip(req.WithContext(ctx))
	if err != nil || resp == nil || resp.Body == nil {
		cancel()
		return resp, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// CloseIdleConnections passes the call on to the base, as polite's own does.
func (d *deadlineTransport) CloseIdleConnections() {
	type closeIdler interface{ CloseIdleConnections() }
	if ci, ok := d.base.(closeIdler); ok {
		ci.CloseIdleConnections()
	}
}

// cancelOnClose is a response body that ends its request's context when
// closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
