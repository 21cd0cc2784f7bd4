package polite

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/polite-go/polite/pace"
)

// classify turns how a round trip ended into an outcome.
// ctxErr is the request context's Err() when RoundTrip returned.
//
// A response is classed by its status: 2xx is a success; 429 and every
// 5xx but 501 and 505 are signals to back off, with their Retry-After, and
// so is any other 4xx or 5xx that carries a Retry-After (GitHub's
// secondary rate limit is a 403 with one): the server asked for the
// pause, whatever the status. The rest, 404 and 403 without a
// Retry-After included, are neutral; their rate-limit fields still count,
// so a 403 that says the quota is exhausted holds its partition until the
// reset.
//
// An error is classed by its cause. The caller's cancellation is ignored and
// the caller's deadline is neutral: neither says anything about the server.
// Timeouts, refused and reset connections and truncated responses are
// signals. DNS failures, certificate errors and anything else are neutral:
// the server was never reached, or backing off would not help.
func classify(resp *http.Response, err error, ctxErr error) pace.Outcome {
	switch {
	case err != nil:
		return classifyError(err, ctxErr)
	case resp == nil:
		return pace.Outcome{Class: pace.Neutral}
	}
	// The status, here rather than in a function of its own: the pace.Outcome
	// is built where it is returned, not copied on the way.
	code := resp.StatusCode
	switch {
	case 200 <= code && code <= 299:
		return pace.Outcome{Class: pace.Success, Quota: parseQuota(resp.Header)}
	case code == http.StatusTooManyRequests,
		500 <= code && code <= 599 && code != http.StatusNotImplemented && code != http.StatusHTTPVersionNotSupported:
		o := pace.Outcome{Class: pace.Signal, Quota: parseQuota(resp.Header)}
		d, ok := parseRetryAfter(resp.Header, time.Now())
		if ok {
			o.RetryAfter = d
		}
		// A 429 that states neither when to come back nor a quota says only
		// that the request came too fast: the Pacer learns the limit.
		o.RateLimited = code == http.StatusTooManyRequests && !ok && !o.Quota.Known
		return o
	case 400 <= code && code <= 599:
		return classifyRetryAfter(resp)
	}
	return pace.Outcome{Class: pace.Neutral, Quota: parseQuota(resp.Header)}
}

// classifyError classes a round trip that ended in err by its cause.
func classifyError(err, ctxErr error) pace.Outcome {
	var dnsErr *net.DNSError
	var netErr net.Error
	switch {
	case errors.Is(ctxErr, context.Canceled):
		return pace.Outcome{Class: pace.Ignore}
	case errors.Is(ctxErr, context.DeadlineExceeded):
		return pace.Outcome{Class: pace.Neutral}
	case errors.As(err, &dnsErr): // timeouts too: the resolver's trouble, not the server's
		return pace.Outcome{Class: pace.Neutral}
	case errors.As(err, &netErr) && netErr.Timeout():
		return pace.Outcome{Class: pace.Signal, TimedOut: true}
	case errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, io.ErrUnexpectedEOF):
		return pace.Outcome{Class: pace.Signal}
	}
	return pace.Outcome{Class: pace.Neutral}
}

// classifyRetryAfter classes a 4xx or 5xx that is no signal by its status:
// a signal when it has a Retry-After, else neutral.
func classifyRetryAfter(resp *http.Response) pace.Outcome {
	o := pace.Outcome{Class: pace.Neutral, Quota: parseQuota(resp.Header)}
	if d, ok := parseRetryAfter(resp.Header, time.Now()); ok {
		o.Class, o.RetryAfter = pace.Signal, d
	}
	return o
}
