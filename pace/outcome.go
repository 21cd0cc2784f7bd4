package pace

import "time"

// An Outcome is how a request ended, as the delay policy sees it: what a
// [Pacer] learns at a [Lease]'s release.
type Outcome struct {
	// Class is what the ending says of the server.
	Class Class
	// RetryAfter is the server's Retry-After; 0 when it sent none. A Pacer
	// caps it at [MaxPause].
	RetryAfter time.Duration
	// TimedOut reports that the request timed out: a backoff signal, but
	// its duration is no sample of the server's latency.
	TimedOut bool
	// RateLimited reports a 429 that states neither a Retry-After nor a
	// quota: a Signal that refuses the request for coming too fast, from
	// which a Pacer learns where a limit that the server does not state
	// lies (see the package documentation).
	RateLimited bool
	// Quota is what the response's rate-limit fields said.
	Quota Quota
}

// Class is what a request's ending tells the policy about its server.
type Class int

const (
	// Success is a 2xx response.
	Success Class = iota
	// Neutral is any other response but the signals, or an error that
	// says nothing of the server (DNS, certificates, the caller's
	// deadline): no backoff, and the latency estimate may only rise.
	Neutral
	// Signal is a 429, a 5xx but 501 and 505, a response with a
	// Retry-After, a timeout, a refused or reset connection: the key is
	// backed off.
	Signal
	// Ignore is a request the caller cancelled: it only frees its slot.
	Ignore
)

// MaxPause caps a server's Retry-After and a rate-limit quota's reset:
// no signal pauses a key for longer.
const MaxPause = time.Hour

// A Quota is what a response's rate-limit fields say of the client's
// quota on the server: how many requests are left in the window, and when
// it ends.
type Quota struct {
	// Known reports that the response had usable fields.
	Known bool
	// Remaining is the number of requests left in the window.
	Remaining int64
	// Limit is the window's quota; 0 when not given.
	Limit int64
	// Reset is the time until the window ends and the quota is restored.
	// A Pacer caps it at [MaxPause].
	Reset time.Duration
	// Partition is the partition of the client's quota that the server
	// named: GitHub's X-RateLimit-Resource ("core", "search"), or the pk
	// parameter of the RateLimit item that binds; "" when it named none.
	// A Pacer keeps the quotas of each partition a server names apart.
	Partition string
}
