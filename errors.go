package polite

import (
	"errors"
	"fmt"
	"strings"

	"github.com/polite-go/polite/robotstxt"
)

// ErrRobotsBlocked is the error returned, wrapped in a [*RobotsBlockedError],
// when robots.txt does not let the transport fetch a URL: its rules, or a
// usage preference of "n" for a use declared with [WithUsage]. Through
// [http.Client] it arrives inside a [*url.Error], so test for it with
// [errors.Is]:
//
//	resp, err := client.Get(u)
//	if errors.Is(err, polite.ErrRobotsBlocked) {
//		// skip u
//	}
var ErrRobotsBlocked = errors.New("polite: blocked by robots.txt")

// RobotsBlockedError says why a request was refused. It matches
// [ErrRobotsBlocked] with [errors.Is].
type RobotsBlockedError struct {
	// URL is the request's URL.
	URL string
	// Agent is the product token that chose the robots.txt group,
	// for example "MyBot" for the User-Agent "MyBot/1.0 (+https://example.com/bot)".
	Agent string
	// RobotsURL is the robots.txt that decided, as fetched, for example
	// "https://example.com/robots.txt".
	RobotsURL string
	// Rule is the rule that decided, as "Disallow: /private/" or "" when it
	// is not known.
	Rule string
	// Reason is set when no rule decided, for example when robots.txt was
	// unreachable and the transport was built with [FailClosed].
	Reason string
	// Uses are the uses declared with [WithUsage] that a usage preference
	// of the file disallows for the URL, as "train-ai", when that is what
	// refused it; Rule then holds the lines that state it, joined by "; ",
	// as "Content-Usage: / train-ai=n". Nil for a refusal by the rules.
	Uses []robotstxt.Category
	// Usage is every usage preference that robots.txt states for the URL,
	// when a usage preference refused it.
	Usage robotstxt.Usage
}

// Error implements the error interface, for example
// `polite: https://example.com/private/ blocked by https://example.com/robots.txt for "mybot" (Disallow: /private/)`
// or, for a usage preference,
// `polite: https://example.com/a blocked by https://example.com/robots.txt for "mybot": train-ai=n (Content-Usage: / train-ai=n)`.
func (e *RobotsBlockedError) Error() string {
	if len(e.Uses) > 0 {
		uses := make([]string, len(e.Uses))
		for i, u := range e.Uses {
			uses[i] = string(u) + "=n"
		}
		msg := fmt.Sprintf("polite: %s blocked by %s for %q: %s", e.URL, e.RobotsURL, e.Agent, strings.Join(uses, ", "))
		if e.Rule != "" {
			msg += " (" + e.Rule + ")"
		}
		return msg
	}
	why := e.Rule
	if why == "" {
		why = e.Reason
	}
	if why == "" {
		return fmt.Sprintf("polite: %s blocked by %s for %q", e.URL, e.RobotsURL, e.Agent)
	}
	return fmt.Sprintf("polite: %s blocked by %s for %q (%s)", e.URL, e.RobotsURL, e.Agent, why)
}

// Is reports whether target is [ErrRobotsBlocked].
func (e *RobotsBlockedError) Is(target error) bool { return target == ErrRobotsBlocked }

// RetryableError reports false: the request never reached the server,
// and a retry would be refused the same way. Retryers that ask an error
// this, such as aws-sdk-go-v2's, stop at once.
func (e *RobotsBlockedError) RetryableError() bool { return false }

// ErrInvalidConfig is matched by every [*ConfigError].
var ErrInvalidConfig = errors.New("polite: invalid configuration")

// A ConfigError reports an option or a field given an invalid value. [New]
// panics with one; [Validate] returns it. It matches [ErrInvalidConfig]
// with [errors.Is].
type ConfigError struct {
	// Option is the option or function given the value: "WithPacing",
	// "WithLimits", "WithRobotsTTL"...
	Option string
	// Field is the field of a [pace.Policy] or [Limits] given the value,
	// such as "BaseDelay"; "" for a value that is not a field.
	Field string
	// Value is the value given.
	Value any
	// Reason says what is wrong with it, for example "must not be
	// negative (None turns it off)".
	Reason string
}

// Error implements the error interface, for example
// "polite: WithPacing: BaseDelay -5s: must not be negative (None turns it off)".
func (e *ConfigError) Error() string {
	what := "nil"
	if e.Value != nil {
		what = fmt.Sprint(e.Value)
	}
	if e.Field != "" {
		what = e.Field + " " + what
	}
	return "polite: " + e.Option + ": " + what + ": " + e.Reason
}

// Is reports whether target is [ErrInvalidConfig].
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }
