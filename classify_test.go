package polite

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/polite-go/polite/pace"
)

func TestClassifyStatus(t *testing.T) {
	tests := []struct {
		code       int
		retryAfter string
		want       pace.Outcome
	}{
		{100, "", outNeutral},
		{101, "", outNeutral},
		{200, "", outSuccess},
		{204, "", outSuccess},
		{206, "", outSuccess},
		{299, "", outSuccess},
		{200, "60", outSuccess},
		{301, "", outNeutral},
		{304, "", outNeutral},
		{308, "60", outNeutral},
		{400, "", outNeutral},
		{401, "", outNeutral},
		{403, "", outNeutral},
		{404, "", outNeutral},
		{408, "", outNeutral},
		{410, "", outNeutral},
		{404, "60", pace.Outcome{Class: pace.Signal, RetryAfter: time.Minute}},    // the server asked for the pause
		{403, "3", pace.Outcome{Class: pace.Signal, RetryAfter: 3 * time.Second}}, // GitHub's secondary rate limit
		{403, "abc", outNeutral},
		{202, "5", outSuccess}, // "poll again in 5s": no pause
		{600, "60", outNeutral},
		{429, "", pace.Outcome{Class: pace.Signal, RateLimited: true}},
		{429, "120", pace.Outcome{Class: pace.Signal, RetryAfter: 2 * time.Minute}},
		{429, "abc", pace.Outcome{Class: pace.Signal, RateLimited: true}},
		{429, "86400", pace.Outcome{Class: pace.Signal, RetryAfter: time.Hour}},
		{500, "", outSignal},
		{501, "", outNeutral},
		{501, "60", pace.Outcome{Class: pace.Signal, RetryAfter: time.Minute}},
		{502, "", outSignal},
		{503, "", outSignal},
		{503, "30", pace.Outcome{Class: pace.Signal, RetryAfter: 30 * time.Second}},
		{504, "", outSignal},
		{505, "", outNeutral},
		{511, "", outSignal},
		{599, "", outSignal},
		{600, "", outNeutral},
		{0, "", outNeutral},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d %s", tc.code, tc.retryAfter), func(t *testing.T) {
			resp := &http.Response{StatusCode: tc.code, Header: http.Header{}}
			if tc.retryAfter != "" {
				resp.Header.Set("Retry-After", tc.retryAfter)
			}
			if got := classify(resp, nil, nil); got != tc.want {
				t.Errorf("classify(%d, Retry-After %q) = %+v; want %+v", tc.code, tc.retryAfter, got, tc.want)
			}
		})
	}
}

// TestClassifyRetryAfterMs checks that Retry-After-Ms, which OpenAI's API
// sends beside Retry-After, is the pause when it can be read.
func TestClassifyRetryAfterMs(t *testing.T) {
	tests := []struct {
		name    string
		code    int
		headers []string
		want    time.Duration
	}{
		{"ms alone", 429, []string{"Retry-After-Ms", "200"}, 200 * time.Millisecond},
		{"ms before seconds", 429, []string{"Retry-After-Ms", "200", "Retry-After", "1"}, 200 * time.Millisecond},
		{"fraction", 503, []string{"Retry-After-Ms", "1.5"}, 1500 * time.Microsecond},
		{"unreadable ms, seconds", 429, []string{"Retry-After-Ms", "-5", "Retry-After", "2"}, 2 * time.Second},
		{"exponent refused", 429, []string{"Retry-After-Ms", "1e3"}, 0},
		{"capped", 429, []string{"Retry-After-Ms", "999999999999"}, time.Hour},
		{"on a 403", 403, []string{"Retry-After-Ms", "20"}, 20 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := &http.Response{StatusCode: tt.code, Header: http.Header{}}
			for i := 0; i < len(tt.headers); i += 2 {
				resp.Header.Set(tt.headers[i], tt.headers[i+1])
			}
			if got := classify(resp, nil, nil); got.RetryAfter != tt.want {
				t.Errorf("RetryAfter = %v; want %v", got.RetryAfter, tt.want)
			}
		})
	}
}

func TestClassifyRetryAfterDate(t *testing.T) {
	// Without a Date header an HTTP-date is measured against the clock.
	synctest.Test(t, func(t *testing.T) {
		resp := &http.Response{StatusCode: 503, Header: http.Header{}}
		resp.Header.Set("Retry-After", time.Now().Add(90*time.Second).UTC().Format(http.TimeFormat))
		want := pace.Outcome{Class: pace.Signal, RetryAfter: 90 * time.Second}
		if got := classify(resp, nil, nil); got != want {
			t.Errorf("classify = %+v; want %+v", got, want)
		}
	})
}

// netTimeout is a net.Error that says it timed out.
type netTimeout struct{}

func (netTimeout) Error() string   { return "i/o timeout" }
func (netTimeout) Timeout() bool   { return true }
func (netTimeout) Temporary() bool { return true }

func TestClassifyError(t *testing.T) {
	// wrap dresses err as http.Client returns it.
	wrap := func(op string, err error) error {
		return &url.Error{Op: "Get", URL: "https://example.com/", Err: &net.OpError{Op: op, Net: "tcp", Err: err}}
	}
	syscallErr := func(errno syscall.Errno) error { return os.NewSyscallError("connect", errno) }
	tests := []struct {
		name   string
		err    error
		ctxErr error
		want   pace.Class
	}{
		{"caller cancelled", wrap("dial", context.Canceled), context.Canceled, pace.Ignore},
		{"caller cancelled during a timeout", wrap("read", os.ErrDeadlineExceeded), context.Canceled, pace.Ignore},
		{"caller's deadline", &url.Error{Op: "Get", URL: "https://example.com/", Err: context.DeadlineExceeded}, context.DeadlineExceeded, pace.Neutral},
		{"caller's deadline during a reset", wrap("read", syscallErr(syscall.ECONNRESET)), context.DeadlineExceeded, pace.Neutral},
		{"read timeout", wrap("read", os.ErrDeadlineExceeded), nil, pace.Signal},
		{"net.Error timeout", fmt.Errorf("net/http: timeout awaiting response headers: %w", netTimeout{}), nil, pace.Signal},
		{"inner deadline", fmt.Errorf("round trip: %w", context.DeadlineExceeded), nil, pace.Signal},
		{"connection refused", wrap("dial", syscallErr(syscall.ECONNREFUSED)), nil, pace.Signal},
		{"connection reset", wrap("read", syscallErr(syscall.ECONNRESET)), nil, pace.Signal},
		{"unexpected EOF", fmt.Errorf("reading headers: %w", io.ErrUnexpectedEOF), nil, pace.Signal},
		{"DNS not found", wrap("dial", &net.DNSError{Err: "no such host", Name: "example.com", IsNotFound: true}), nil, pace.Neutral},
		{"DNS timeout", wrap("dial", &net.DNSError{Err: "i/o timeout", Name: "example.com", IsTimeout: true}), nil, pace.Neutral},
		{"unknown authority", &url.Error{Op: "Get", URL: "https://example.com/", Err: &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}}, nil, pace.Neutral},
		{"wrong host name", &url.Error{Op: "Get", URL: "https://example.com/", Err: x509.HostnameError{Host: "example.com", Certificate: &x509.Certificate{}}}, nil, pace.Neutral},
		{"not TLS", tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}, nil, pace.Neutral},
		{"malformed URL", &url.Error{Op: "parse", URL: "::", Err: errors.New("missing protocol scheme")}, nil, pace.Neutral},
		{"EOF", io.EOF, nil, pace.Neutral},
		{"other", errors.New("boom"), nil, pace.Neutral},
		{"cancelled without the caller", context.Canceled, nil, pace.Neutral},
	}
	// Timeouts back off, but their duration is no latency sample.
	timedOut := map[string]bool{"read timeout": true, "net.Error timeout": true, "inner deadline": true}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := classify(nil, tc.err, tc.ctxErr)
			wantTimedOut := timedOut[tc.name]
			if got != (pace.Outcome{Class: tc.want, TimedOut: wantTimedOut}) {
				t.Errorf("classify(nil, %v, %v) = %+v; want class %d, timedOut %v", tc.err, tc.ctxErr, got, tc.want, wantTimedOut)
			}
		})
	}
}

func TestClassifyOddReturns(t *testing.T) {
	// A broken base may return neither, or both.
	if got := classify(nil, nil, nil); got != outNeutral {
		t.Errorf("classify(nil, nil, nil) = %+v; want neutral", got)
	}
	resp := &http.Response{StatusCode: 200}
	if got := classify(resp, os.NewSyscallError("read", syscall.ECONNRESET), nil); got != outSignal {
		t.Errorf("classify(200, reset) = %+v; want the error to decide", got)
	}
}

// TestRefusalsAreNotRetryable checks that polite's refusals tell a
// retryer that asks an error RetryableError, as aws-sdk-go-v2's does, not
// to retry them, through the wrapping an HTTP client adds.
func TestRefusalsAreNotRetryable(t *testing.T) {
	type retryable interface{ RetryableError() bool }
	for _, err := range []error{
		&pace.DeadlineError{Key: "h"},
		&RobotsBlockedError{URL: "http://h/private"},
	} {
		t.Run(fmt.Sprintf("%T", err), func(t *testing.T) {
			wrapped := fmt.Errorf("request send failed, %w", &url.Error{Op: "Get", URL: "http://h/", Err: err})
			var r retryable
			if !errors.As(wrapped, &r) || r.RetryableError() {
				t.Errorf("%v: RetryableError not found, or true", wrapped)
			}
		})
	}
}
