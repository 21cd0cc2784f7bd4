package polite

import (
	"fmt"
)

// Policies are the pacing policies of every key, which a [Pacer] runs:
// the transport's policy, and the overrides that [WithPacingRules] or
// [WithPacingFunc] give some keys. [WithPacer]'s function is given the
// transport's; a Pacer of its own making may build them as it likes.
type Policies struct {
	// Default is the policy of every key that Override leaves alone.
	Default PacingPolicy
	// Override returns the policy of key when it has one of its own, and
	// false when it keeps Default; nil: every key keeps Default. It must
	// be safe for concurrent use and give a key the same answer each
	// time. The transport's returns Effective policies, merged over
	// Default.
	Override func(key string) (PacingPolicy, bool)
}

// For returns the policy in force for key: Override's, merged over
// Default, or Default; Effective either way. An overriding policy that is
// invalid (see [PacingPolicy.Validate]) counts as none: the transport
// refuses the requests of such a key before they reach a Pacer.
func (ps Policies) For(key string) PacingPolicy {
	def := ps.Default.Effective()
	if ps.Override != nil {
		if p, ok := ps.Override(key); ok && p.validate("") == nil {
			return p.over(def)
		}
	}
	return def
}

// policySet is the transport's policy of each key: the default, and the
// overrides of WithPacingRules or WithPacingFunc, merged over it.
type policySet struct {
	def   PacingPolicy                          // Effective
	rules *ruleIndex                            // merged over def; nil: none
	fn    func(key string) (PacingPolicy, bool) // nil: none
}

// custom reports whether some key may have a policy other than the
// default.
func (ps *policySet) custom() bool { return ps.rules != nil || ps.fn != nil }

// mayCap reports whether some key's policy may cap its bandwidth.
func (ps *policySet) mayCap() bool {
	if ps.def.bandwidth() > 0 || ps.fn != nil {
		return true
	}
	if ps.rules != nil {
		for _, e := range ps.rules.names {
			if e.host != nil && e.host.bandwidth() > 0 || e.domain != nil && e.domain.bandwidth() > 0 {
				return true
			}
		}
	}
	return false
}

// forKey returns the policy in force for key, Effective, or the
// *ConfigError of a policy WithPacingFunc gave it that is invalid. It
// does not allocate but for WithPacingFunc's policies; the policy
// returned must not be changed.
func (ps *policySet) forKey(key string) (*PacingPolicy, error) {
	switch {
	case ps.rules != nil:
		if p := ps.rules.choose(key); p != nil {
			return p, nil
		}
	case ps.fn != nil:
		p, ok := ps.fn(key)
		if !ok {
			break
		}
		if err := p.validate("WithPacingFunc"); err != nil {
			ce := err.(*ConfigError)
			ce.Reason += fmt.Sprintf(" (the policy of key %q)", key)
			return &ps.def, ce
		}
		m := p.over(ps.def)
		return &m, nil
	}
	return &ps.def, nil
}

// policyOf returns the policy in force for tg's key.
func (t *PoliteTransport) policyOf(tg target) PacingPolicy {
	if tg.policy == nil {
		tg.policy, _ = t.policies.forKey(tg.pacingKey) // targetOf found no error
	}
	return *tg.policy
}

// policies returns the Policies that the transport's Pacer runs.
func (ps *policySet) policies() Policies {
	out := Policies{Default: ps.def}
	if ps.custom() {
		out.Override = func(key string) (PacingPolicy, bool) {
			p, err := ps.forKey(key)
			return *p, err == nil && *p != ps.def
		}
	}
	return out
}
