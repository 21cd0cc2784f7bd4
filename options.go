package polite

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/time/rate"

	"github.com/polite-go/polite/pace"
)

// An Option configures a [PoliteTransport]; see [New].
type Option interface{ apply(*config) error }

// optionFunc is an Option made of the function that applies it.
type optionFunc func(*config) error

func (f optionFunc) apply(c *config) error { return f(c) }

// Validate reports the first option in opts that [New] would refuse, as a
// [*ConfigError], or nil.
func Validate(opts ...Option) error {
	_, err := configure(opts)
	return err
}

// configure applies opts in order to the default configuration. It stops
// at the first that fails.
func configure(opts []Option) (config, error) {
	c := defaultConfig()
	for i, o := range opts {
		if o == nil {
			return c, &ConfigError{Option: "New", Reason: fmt.Sprintf("option %d is nil", i)}
		}
		if err := o.apply(&c); err != nil {
			return c, err
		}
	}
	return c, nil
}

// FailurePolicy says what the transport does with a request that
// robots.txt cannot decide: one to an origin whose robots.txt is
// unreachable (a 429 or 5xx answer, a network error or a timeout) and has
// no earlier good copy, or one that the file's engine does not decide (see
// [WithRobotsFailure]).
type FailurePolicy int

const (
	// FailOpen sends the request. For an unreachable robots.txt, the
	// failed fetch still backs the host off, and it is retried after a
	// short time.
	FailOpen FailurePolicy = iota
	// FailClosed refuses the request with a [*RobotsBlockedError], which
	// matches [ErrRobotsBlocked] and whose Reason says why: for an
	// unreachable robots.txt, as RFC 9309 §2.3.1.4 asks ("the crawler MUST
	// assume complete disallow").
	FailClosed
)

// String returns "FailOpen" or "FailClosed".
func (p FailurePolicy) String() string {
	switch p {
	case FailOpen:
		return "FailOpen"
	case FailClosed:
		return "FailClosed"
	}
	return fmt.Sprintf("FailurePolicy(%d)", int(p))
}

// config is everything the options set. Each option validates its value
// when it is applied, so nothing downstream checks it again.
type config struct {
	userAgent       string
	pacing          pace.Policy                      // Effective: every field set
	limits          Limits                           // every field set
	pacingKey       func(*url.URL) string            // nil: PacingKeyHost, or the IP key when resolver is set
	resolver        Resolver                         // the IP key's; nil: not the IP key
	quotaPartition  func(*http.Request) string       // nil: none
	rules           *ruleIndex                       // WithPacingRules', unmerged; nil: none
	policyFunc      func(string) (pace.Policy, bool) // WithPacingFunc's; nil: none
	newPacer        func(pace.Config) pace.Pacer     // nil: the in-memory pacer
	robotsStore     RobotsStore                      // nil: none
	robotsModes     robotsModes                      // WithRobotsMode's
	robotsTransport http.RoundTripper                // nil: the base
	robotsTTL       time.Duration
	robotsTimeout   time.Duration
	robotsFailure   FailurePolicy // for an unreachable robots.txt
	undecided       FailurePolicy // for a request robots.txt does not decide
	global          *rate.Limiter
	hooks           emitter // WithEvents' hooks and WithLogger's, in order

	// usage is WithUsage's policy (usage.go).
	usage usagePolicy
}

// defaultConfig is the configuration of a transport built with no option.
func defaultConfig() config {
	return config{
		pacing:        pace.Policy{}.Effective(),
		limits:        defaultLimits,
		robotsTTL:     24 * time.Hour,
		robotsTimeout: 10 * time.Second,
		undecided:     FailClosed,
	}
}

// WithUserAgent sets the User-Agent header of requests that have none (on a
// copy of the request) and of the transport's own robots.txt fetches. The
// robots.txt group that binds a request is chosen by the product token of
// its effective User-Agent: "MyBot" for "MyBot/1.0 (+https://example.com/bot)".
// A request with no User-Agent, sent by a transport with none, is matched as
// Go's default "Go-http-client".
func WithUserAgent(ua string) Option {
	return optionFunc(func(c *config) error {
		c.userAgent = ua
		return nil
	})
}

// WithRobotsTTL sets how long a fetched robots.txt is used before it is
// fetched again (default 24h, the most RFC 9309 §2.4 allows). A failed fetch
// is retried after the smaller of this and 5 minutes. Values below 1ns are
// an error.
func WithRobotsTTL(d time.Duration) Option {
	return optionFunc(func(c *config) error {
		if err := positive("WithRobotsTTL", d); err != nil {
			return err
		}
		c.robotsTTL = d
		return nil
	})
}

// WithRobotsTimeout bounds a robots.txt fetch, redirects included, from
// sending its first request to reading the last body (default 10s); past
// it the file counts as unreachable. Waiting for the host's first turn is
// not counted: a host paused by a backoff is not unreachable. The fetch
// ends at the timeout even through a base that does not heed the
// request's context; the request keeps its slot of the host's MaxInFlight
// while the base holds it, for one more timeout at most, and the base's
// goroutine closes whatever it returns later. Values below 1ns are an
// error.
func WithRobotsTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) error {
		if err := positive("WithRobotsTimeout", d); err != nil {
			return err
		}
		c.robotsTimeout = d
		return nil
	})
}

// WithRobotsFailure sets what happens to the requests that robots.txt
// cannot decide, [FailOpen] or [FailClosed]:
//
//   - unreachable, for the requests to an origin whose robots.txt is
//     unreachable and has no earlier good copy. Default FailOpen: a
//     server in trouble is backed off, and a crawler that stopped at every
//     flaky robots.txt would stop often.
//   - undecided, for the requests whose path the engine does not decide
//     against the rules of a file written to defeat it (see package
//     [robotstxt]: a path longer than
//     [github.com/polite-go/polite/robotstxt.MaxPathLength], or a file
//     the engine flags as too complex when it is parsed). Default
//     FailClosed: the file has rules for the crawler, and the request may
//     be one they disallow. FailOpen sends such a request all the same,
//     with an [EventWouldRefuse] that says why.
//
// Either way the request's Decision ([PoliteTransport.Check]) and its
// event give the reason, and [RobotsStats].Undecided counts the
// undecided. Any other value is an error.
func WithRobotsFailure(unreachable, undecided FailurePolicy) Option {
	return optionFunc(func(c *config) error {
		for _, p := range [...]FailurePolicy{unreachable, undecided} {
			if p != FailOpen && p != FailClosed {
				return &ConfigError{Option: "WithRobotsFailure", Value: p, Reason: "unknown policy"}
			}
		}
		c.robotsFailure, c.undecided = unreachable, undecided
		return nil
	})
}

// WithGlobalLimiter caps the rate of requests across all hosts, robots.txt
// fetches included. Each request waits on l before it waits for its host's
// turn. Nil means no cap.
func WithGlobalLimiter(l *rate.Limiter) Option {
	return optionFunc(func(c *config) error {
		c.global = l
		return nil
	})
}

// WithPacingKey sets the key requests are paced by, the function f of
// their URL: requests with the same key share one pace, one backoff and
// one in-flight limit. [PacingKeyHost], the default, paces each host name
// apart, whatever its scheme and port; [PacingKeyOrigin] paces each
// scheme, host and port apart; [PacingKeyDomain] each registrable domain,
// its subdomains together; any other function groups URLs as it likes. f
// is given http and https URLs with a host and must be safe for
// concurrent use; a URL for which it returns "" is paced by its host. Nil
// is an error. To pace by server address, see [WithPacingKeyIP]. It and
// WithPacingKeyIP make one setting: the later replaces the earlier.
func WithPacingKey(f func(u *url.URL) string) Option {
	return optionFunc(func(c *config) error {
		if f == nil {
			return &ConfigError{Option: "WithPacingKey", Reason: "must not be nil"}
		}
		c.pacingKey, c.resolver = f, nil
		return nil
	})
}

// WithRobotsTransport sends robots.txt fetches through rt instead of the
// base transport. Use it when the base adds credentials (an x/oauth2
// Transport, an API key header) that a robots.txt fetch should not carry:
// give it the transport under the credentials. Nil means the base.
//
// A robots.txt that redirects to another host than its origin's (another
// scheme or port of that host is the same server) is followed through rt.
// Without rt, it is followed through the base only when the base is an
// [*http.Transport], which adds no header of its own; any other base may
// add credentials that the other host must not see, so the redirect is
// not followed and the file is unreachable ([FailOpen] and [FailClosed]
// apply), with an error that names this option.
func WithRobotsTransport(rt http.RoundTripper) Option {
	return optionFunc(func(c *config) error {
		c.robotsTransport = rt
		return nil
	})
}

// APIDefaults returns the options for a client of an API rather than a
// crawler: robots.txt off (it speaks to crawlers), and
//
//	WithPacing(pace.Policy{BaseDelay: pace.None, Jitter: pace.None, LatencyFactor: pace.None,
//		MaxInFlight: pace.None, BackoffBase: 50 * time.Millisecond, MaxBackoff: time.Minute,
//		RecoverAfter: 1})
//
// no base delay, no jitter, no latency pacing and no cap on the requests
// in flight, so that nothing paces a key until the server signals. An API
// says how much it takes in its own fields and statuses, and an SDK sets
// its own concurrency: a cap of polite's would bind where no server asked
// for one. Once the server signals, a Retry-After and the rate-limit
// fields are honoured exactly, and a 5xx or a timeout without a
// Retry-After pauses the key for 50ms, doubling with each incident to at
// most a minute: shorter than the SDKs' usual first retry, so that under
// an SDK's retries the gap between tries is the longer of the two, which
// is the SDK's, and never their sum.
// Each success lowers the level by one, so that the pause comes down as
// fast as the server recovers. Since options merge field by field and the
// last one wins, options before APIDefaults lose only what it sets, the
// robots.txt mode and those seven fields, and options after it override
// what they set.
func APIDefaults() Option {
	return all(
		WithRobotsMode(RobotsOff),
		WithPacing(pace.Policy{BaseDelay: pace.None, Jitter: pace.None, LatencyFactor: pace.None,
			MaxInFlight: pace.None, BackoffBase: 50 * time.Millisecond, MaxBackoff: time.Minute,
			RecoverAfter: 1}),
	)
}

// WithQuotaPartition makes f name the partition of the server's rate-limit
// quota that a request spends, such as its credentials
// ([QuotaPartitionCredentials]), so that the quota one partition's
// responses report holds only that partition's requests: an exhausted
// quota, or a low one spread over its window, of one API token does not
// hold a call made with another. Requests for which f returns the same
// string share a partition; without this option every request of a
// pacing key is in the partition "". The server may name a partition too,
// in the fields it sends (GitHub's X-RateLimit-Resource, the pk parameter
// of the RateLimit field): the quotas of each resource it names are then
// kept apart within the request's partition, and a request waits for
// them all, since the transport cannot know before sending which resource
// it spends. To keep a server's resources apart, f names the resource as
// well, from the request (a GitHub client's f gives /search/ paths a
// partition of their own). The backoff after a 5xx, a timeout, a 429 or a
// Retry-After stays the pacing key's: the server's health is shared. f
// must be safe for concurrent use and quick: it runs for every request.
// Nil is an error.
func WithQuotaPartition(f func(req *http.Request) string) Option {
	return optionFunc(func(c *config) error {
		if f == nil {
			return &ConfigError{Option: "WithQuotaPartition", Reason: "must not be nil"}
		}
		c.quotaPartition = f
		return nil
	})
}

// QuotaPartitionCredentials is a function for [WithQuotaPartition] that
// puts requests with the same credentials in one partition: a hash of
// their Authorization header, or of their X-Api-Key or Api-Key header
// when they have none, so that no credential is kept in the transport's
// state. Of an AWS Signature Version 4 Authorization, which changes with
// every request, only the access key of its Credential is hashed. A
// request with none of them is in the partition "". The credentials must
// be on the request when the transport sees it: the SDKs add them above
// their HTTP client, and an x/oauth2 Transport must be above the polite
// one, not its base.
func QuotaPartitionCredentials(req *http.Request) string {
	for _, name := range [...]string{"Authorization", "X-Api-Key", "Api-Key"} {
		if v := req.Header[name]; len(v) > 0 && v[0] != "" {
			cred := v[0]
			if rest, ok := strings.CutPrefix(cred, "AWS4-HMAC-SHA256 "); ok {
				if _, c, ok := strings.Cut(rest, "Credential="); ok {
					cred, _, _ = strings.Cut(c, "/") // the access key id
				}
			}
			sum := sha256.Sum256([]byte(name + ": " + cred))
			return base64.RawURLEncoding.EncodeToString(sum[:12])
		}
	}
	return ""
}

// all returns an option that applies opts in order.
func all(opts ...Option) Option {
	return optionFunc(func(c *config) error {
		for _, o := range opts {
			if err := o.apply(c); err != nil {
				return err
			}
		}
		return nil
	})
}

// WithEvents adds hook to the functions that receive the transport's
// events (see [Event]), in the order they were added. A hook is called on
// the goroutine where the event happened, outside the transport's locks,
// so it may call the transport; it must be safe for concurrent use and
// quick, since the request that caused the event waits for it. Nil is
// ignored. With no hook and no logger, events cost nothing.
func WithEvents(hook func(Event)) Option {
	return optionFunc(func(c *config) error {
		if hook != nil {
			c.hooks = append(c.hooks, hook)
		}
		return nil
	})
}

// WithLogger makes l one of the receivers of the transport's events (see
// [WithEvents]). Each event is one record, its message "polite: " and the
// event kind's name ("polite: backing off"), at level Info, but for these:
// [EventRefused] at Debug; an [EventRobotsFetched] with an error at Warn,
// as "polite: robots.txt unreachable"; an [EventBackoff] at level 0 as
// "polite: backoff cleared"; [EventUnreadableField] at Warn; an
// [EventRefused] by a deadline at Info, as "polite: refused by its
// deadline"; and [EventSent], a request that waited a second or more for
// its turn at Info as "polite: waited", the others at Debug as "polite:
// sent". The attributes are:
//
//	key            every event: the pacing key
//	url            robots.txt fetches: the robots.txt URL; the others: the request's
//	status         EventRobotsFetched: the HTTP status, 0 for none; EventBackoff: the response's, when one came
//	rules          EventRobotsFetched: Allow and Disallow rules in the file
//	skipped_lines  EventRobotsFetched: lines that could not be read
//	bytes          EventRobotsFetched: the length of the body read
//	error, stale   EventRobotsFetched: why it is unreachable, and whether the last good copy stays in force
//	duration       EventRobotsFetched: how long the fetch took
//	error          EventBackoff: the error that came instead of a response; refusals by a deadline: the *pace.DeadlineError
//	rule           refusals: the rule, or the usage preference's lines, that refused, when one did
//	reason         refusals: why, when no rule did
//	group          refusals: the robots.txt group that bound, when one did
//	disallowed     refusals by a usage preference: the declared uses disallowed, as "train-ai=n"
//	wait           EventSent: how long the request waited for its turn
//	cause          EventSent: what held it up longest, as "crawl-delay" (see Event.Waits), when something did
//	level, pause   EventBackoff raised: the backoff level, and how long the key is paused
//	retry_after    EventBackoff raised: the server's Retry-After, 0s for none
//	field, value   EventUnreadableField: the field's name, and its value cut to 100 bytes
//
// Nil, the default, logs nothing.
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(c *config) error {
		if l != nil {
			c.hooks = append(c.hooks, logEvents(l))
		}
		return nil
	})
}

// positive returns an error unless d, the value of option name, is more
// than 0.
func positive(name string, d time.Duration) error {
	if d <= 0 {
		return &ConfigError{Option: name, Value: d, Reason: "must be positive"}
	}
	return nil
}
