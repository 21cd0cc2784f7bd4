package polite

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"syscall"
	"time"
)

// classify turns how a round trip ended into an outcome.
// ctxErr is the request context's Err() when RoundTrip returned.
//
// A response is classed by its status: 2xx is a
// success; 429 and every 5xx but 501 and 505 are signals to back off, with
// their Retry-After; the rest, 404 and 403 included, are neutral.
//
// An error is classed by its cause. The caller's cancellation is ignored and
// the caller's deadline is neutral: neither says anything about the server.
// Timeouts, refused and reset connections and truncated responses are
// signals. DNS failures, certificate errors and anything else are neutral:
// the server was never reached, or backing off would not help.
func classify(resp *http.Response, err error, ctxErr error) outcome {
	if err == nil {
		if resp == nil {
			return outcome{class: classNeutral}
		}
		return classifyStatus(resp)
	}

	var dnsErr *net.DNSError
	var netErr net.Error
	switch {
	case errors.Is(ctxErr, context.Canceled):
		return outcome{class: classIgnore}
	case errors.Is(ctxErr, context.DeadlineExceeded):
		return outcome{class: classNeutral}
	case errors.As(err, &dnsErr): // timeouts too: the resolver's trouble, not the server's
		return outcome{class: classNeutral}
	case errors.As(err, &netErr) && netErr.Timeout():
		return outcome{class: classSignal, timedOut: true}
	case errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, io.ErrUnexpectedEOF):
		return outcome{class: classSignal}
	}
	return outcome{class: classNeutral}
}

func classifyStatus(resp *http.Response) outcome {
	code := resp.StatusCode
	switch {
	case 200 <= code && code <= 299:
		return outcome{class: classSuccess, quota: parseQuota(resp.Header)}
	case code == http.StatusTooManyRequests,
		500 <= code && code <= 599 && code != http.StatusNotImplemented && code != http.StatusHTTPVersionNotSupported:
		o := outcome{class: classSignal, quota: parseQuota(resp.Header)}
		if d, ok := parseRetryAfter(resp.Header, time.Now()); ok {
			o.retryAfter = d
		}
		return o
	}
	return outcome{class: classNeutral, quota: parseQuota(resp.Header)}
}
