package polite

import (
	"fmt"

	"github.com/polite-go/polite/pace"
)

// This file is how the transport paces: the options that set its policy
// and its Pacer, and the pace.Config it makes of them. The policy itself,
// the Pacer seam and the in-memory Pacer are package pace's.

// WithPacing sets the pacing policy's fields that p sets (the non-zero
// ones); the others keep what earlier options gave them, or their
// defaults. So APIDefaults(), WithPacing(pace.Policy{MaxInFlight: 64})
// keeps the API policy with 64 in flight. An invalid p (see
// [pace.Policy.Validate]) is an error.
func WithPacing(p pace.Policy) Option {
	return optionFunc(func(c *config) error {
		if err := p.Validate(); err != nil {
			return policyConfigError("WithPacing", "", err)
		}
		c.pacing = p.Over(c.pacing)
		return nil
	})
}

// WithPacer makes the transport pace requests with the Pacer that
// newPacer returns for the transport's pace.Config, instead of the
// in-memory one of [pace.NewMemory]. The Config it is given has the
// transport's Effective policy, the Override that [WithPacingRules] or
// [WithPacingFunc] make, [Limits].MaxKeys, and an Evicted hook that
// reports [EventHostEvicted]; the Pacer must run, for each key, the
// policy that [pace.Config.For] says. The transport's events report what
// the Pacer's releases change; Ready, Check and Stats report its state
// when it is a [pace.ReadyPacer] and a [pace.StatsPacer]. Nil is an
// error, and so is a nil Pacer returned: New panics with a [*ConfigError].
func WithPacer(newPacer func(pace.Config) pace.Pacer) Option {
	return optionFunc(func(c *config) error {
		if newPacer == nil {
			return &ConfigError{Option: "WithPacer", Reason: "must not be nil"}
		}
		c.newPacer = newPacer
		return nil
	})
}

// policyConfigError returns the *ConfigError of option for err, a
// *pace.PolicyError of the policy at field ("" for the option's own
// policy; "rules[2].Policy" for a rule's).
func policyConfigError(option, field string, err error) error {
	pe, ok := err.(*pace.PolicyError)
	if !ok {
		return &ConfigError{Option: option, Reason: err.Error()}
	}
	if field != "" {
		field += "."
	}
	return &ConfigError{Option: option, Field: field + pe.Field, Value: pe.Value, Reason: pe.Reason}
}

// newPacer returns the transport's Pacer for its config c, whose Evicted
// hook reports evictions to events.
func newPacer(c *config, pc pace.Config) pace.Pacer {
	if c.newPacer != nil {
		p := c.newPacer(pc)
		if p == nil {
			panic(&ConfigError{Option: "WithPacer", Reason: "the function returned a nil Pacer"})
		}
		return p
	}
	p, err := pace.NewMemory(pc)
	if err != nil {
		panic(policyConfigError("New", "", err)) // the options validated it
	}
	return p
}

// pacingConfig returns the pace.Config that c's options make, its Evicted
// hook reporting to events.
func pacingConfig(c *config, events emitter) pace.Config {
	pc := pace.Config{Policy: c.pacing, MaxKeys: c.limits.MaxKeys}
	switch {
	case c.rules != nil:
		rules := c.rules.merge(c.pacing)
		pc.Override = func(key string) (pace.Policy, bool) {
			if p := rules.choose(key); p != nil {
				return *p, true
			}
			return pace.Policy{}, false
		}
	case c.policyFunc != nil:
		pc.Override = c.policyFunc
	}
	if events.on() {
		pc.Evicted = func(key string) { events.emit(Event{Kind: EventHostEvicted, Key: key}) }
	}
	return pc
}

// mayCapBandwidth reports whether c gives some key a policy that caps its
// bandwidth, which the transport then applies to response bodies.
func mayCapBandwidth(c *config) bool {
	if pace.Value(c.pacing.MaxBandwidth) > 0 || c.policyFunc != nil {
		return true
	}
	if c.rules != nil {
		for _, e := range c.rules.names {
			for _, p := range [...]*pace.Policy{e.host, e.domain} {
				if p != nil && pace.Value(p.MaxBandwidth) > 0 {
					return true
				}
			}
		}
	}
	return false
}

// keyPolicyError returns the *ConfigError of an invalid policy, err, that
// WithPacingFunc gave key: its requests fail with it, unsent.
func keyPolicyError(key string, err error) error {
	ce := policyConfigError("WithPacingFunc", "", err).(*ConfigError)
	ce.Reason += fmt.Sprintf(" (the policy of key %q)", key)
	return ce
}
