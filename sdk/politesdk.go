package politesdk

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/pace"
)

// Refused reports whether err is one of polite's refusals, which a retry
// must not repeat: a robots.txt refusal, which never reached the server
// and would be refused again, or a [*pace.DeadlineError], whose context
// ends before its key allows a start. Both report RetryableError false,
// which aws-sdk-go-v2's retryer asks; a retry policy that does not ask
// must stop on Refused.
func Refused(err error) bool {
	var late *pace.DeadlineError
	return errors.Is(err, polite.ErrRobotsBlocked) || errors.As(err, &late)
}

// OpenAIStopOnRefusal is a middleware for openai-go
// (option.WithMiddleware) that ends its retries at once on polite's
// refusals. openai-go retries every error that comes without a response,
// and lets nothing outside it mark an error final; what it does obey is a
// response's "X-Should-Retry: false". So on a refusal this middleware
// returns the error with a stand-in response that carries that field:
// openai-go stops and returns the error, polite's still found with
// errors.As and errors.Is. Other errors and every response pass as they
// are.
func OpenAIStopOnRefusal(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	resp, err := next(req)
	if err != nil && resp == nil && Refused(err) {
		resp = &http.Response{
			Status:     "polite refusal",
			Header:     http.Header{"X-Should-Retry": {"false"}},
			Body:       http.NoBody,
			Request:    req,
			ProtoMajor: 1, ProtoMinor: 1,
		}
	}
	return resp, err
}

// GitHubPartition is a function for [polite.WithQuotaPartition] that puts
// a GitHub API request in the partition of the quota it spends: its
// credentials ([polite.QuotaPartitionCredentials]) and the resource its
// path counts against, as GitHub names them in X-RateLimit-Resource
// ("search", "code_search", "graphql"; "core" for the rest). So one
// token's exhausted quota holds none of another token's calls, and an
// exhausted search quota holds no core call.
func GitHubPartition(req *http.Request) string {
	return polite.QuotaPartitionCredentials(req) + " " + githubResource(req.Method, req.URL.Path)
}

// githubResource is the resource of GitHub's primary rate limit that a
// request to path counts against, as go-github's GetRateLimitCategory
// finds it for the resources an SDK call may spend.
func githubResource(method, path string) string {
	path = strings.TrimPrefix(path, "/api/v3") // GitHub Enterprise Server
	switch {
	case strings.HasPrefix(path, "/search/code") && method == http.MethodGet:
		return "code_search"
	case strings.HasPrefix(path, "/search/"):
		return "search"
	case path == "/graphql" || path == "/api/graphql":
		return "graphql"
	}
	return "core"
}

// maxErrorBody bounds the bytes of an error response that
// GitHubSecondaryLimits reads to find GitHub's documentation link.
const maxErrorBody = 64 << 10

// GitHubSecondaryLimits returns a RoundTripper for the base of a polite
// transport that gives GitHub's secondary rate limits their documented
// wait when the response does not say it. GitHub answers a secondary
// limit with a 403 or a 429 whose body links to its documentation of
// them, and says to wait for its Retry-After when it has one; else, with
// X-RateLimit-Remaining 0, until X-RateLimit-Reset (polite reads both
// itself); else at least a minute. For that last case it adds
// "Retry-After: 60" to the response, which polite then honours, and
// go-github reports in its AbuseRateLimitError. The body is read, at most
// 64 KiB, only for a 403 or a 429 with neither field, and is given back
// whole. Nil base means [http.DefaultTransport].
func GitHubSecondaryLimits(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return secondaryLimits{base}
}

type secondaryLimits struct{ base http.RoundTripper }

// RoundTrip implements [http.RoundTripper].
func (s secondaryLimits) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := s.base.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusTooManyRequests ||
		resp.Header.Get("Retry-After") != "" || resp.Header.Get("X-RateLimit-Remaining") == "0" {
		return resp, err
	}
	head, readErr := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
	if readErr == nil && (bytes.Contains(head, []byte("secondary-rate-limits")) || bytes.Contains(head, []byte("#abuse-rate-limits"))) {
		h := resp.Header.Clone()
		if h == nil {
			h = http.Header{}
		}
		h.Set("Retry-After", "60")
		resp.Header = h
	}
	return resp, nil
}

// CloseIdleConnections closes the base's idle connections, when it can.
func (s secondaryLimits) CloseIdleConnections() {
	if c, ok := s.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
