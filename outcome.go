package polite

import "time"

// An Outcome is how a request ended, as the delay policy sees it: what a
// [Pacer] learns from a [Lease]'s release. The transport makes it from the
// response or the error.
type Outcome struct {
	// Class is what the ending says of the host.
	Class OutcomeClass
	// RetryAfter is the server's Retry-After, parsed and capped at one
	// hour; 0 when it sent none.
	RetryAfter time.Duration
	// TimedOut reports that the request timed out: a backoff signal, but
	// its duration is no sample of the server's latency.
	TimedOut bool
	// Quota is what the response's rate-limit fields said.
	Quota Quota
}

// OutcomeClass is what a request's ending tells the policy about its host.
type OutcomeClass int

const (
	// OutcomeSuccess is a 2xx response.
	OutcomeSuccess OutcomeClass = iota
	// OutcomeNeutral is any other response but the signals, or an error
	// that says nothing of the server (DNS, certificates, the caller's
	// deadline): no backoff, and the latency estimate may only rise.
	OutcomeNeutral
	// OutcomeSignal is a 429, a 5xx but 501 and 505, a timeout, a refused
	// or reset connection: the host is backed off.
	OutcomeSignal
	// OutcomeIgnore is a request the caller cancelled: it only frees its
	// slot.
	OutcomeIgnore
)

// A Quota is what a response's rate-limit fields say of the client's
// quota on the server (see the package documentation for the fields read).
type Quota struct {
	// Known reports that the response had usable fields.
	Known bool
	// Remaining is the number of requests left in the window.
	Remaining int64
	// Limit is the window's quota; 0 when not given.
	Limit int64
	// Reset is the time until the window ends and the quota is restored,
	// not capped.
	Reset time.Duration
	// Partition is the partition of the client's quota that the server
	// named: GitHub's X-RateLimit-Resource ("core", "search"), or the pk
	// parameter of the RateLimit item that binds; "" when it named none.
	// A Pacer keeps the quotas of each partition a server names apart.
	Partition string
}
