package polite

import (
	"fmt"
	"hash/maphash"
	"strings"

	"github.com/polite-go/polite/pace"
)

// This file chooses the pacing policy of each key: the transport's, or an
// override that a rule or a function gives some keys.

// A PacingRule gives the keys of one host, or of one domain and its
// subdomains, a policy of their own; see [WithPacingRules]. Exactly one of
// Host and Domain is set.
type PacingRule struct {
	// Host is the host name the rule is for, and only it: "example.com"
	// is not "www.example.com". It may be an IP address, which is what
	// [WithPacingKeyIP]'s keys are.
	Host string
	// Domain is the domain the rule is for, with its subdomains:
	// "example.com" is "example.com", "www.example.com" and
	// "a.b.example.com".
	Domain string
	// Policy is merged over the transport's policy: the fields it sets,
	// the non-zero ones, replace the transport's, and [None] turns a part
	// off, as [WithPacing] does. A robots.txt Crawl-delay and a server's
	// Retry-After remain floors on what it sets.
	Policy pace.Policy
}

// WithPacingRules gives the keys that rules match a policy of their own,
// merged over the transport's ([WithPacing]'s, whichever option comes
// first). A key is matched as a host name: the host, the registrable
// domain or the address that [PacingKeyHost], [PacingKeyDomain] and
// [WithPacingKeyIP] give, or the host part of [PacingKeyOrigin]'s
// "scheme://host:port"; any other key function's keys likewise. The
// most specific rule wins: a Host rule for the key's host, then the
// Domain rule of the longest domain that holds it. So with
// PacingKeyDomain, whose key is "example.com" for "www.example.com", a
// Host rule for www.example.com matches nothing; with the IP key, rules
// name addresses. Choosing costs a hash for the key's host and each of its
// suffixes that a rule's depth allows, whatever the number of rules
// (BENCHMARKS.md §12); the in-memory pacer chooses once per key.
//
// Host and Domain are read as the transport reads a URL's host (lower
// case, international names in their ASCII form, one trailing dot
// dropped), without a scheme, port or path. A rule with neither or both,
// a name that names no host or has a scheme, port or path, a
// Domain that is an IP address, two rules for one Host or one Domain, or
// an invalid Policy (see [pace.Policy.Validate]) is an error, a
// [*ConfigError] whose Field says which rule: "rules[2].Policy.BaseDelay".
//
// It and [WithPacingFunc] make one setting: the later replaces the
// earlier. No rules means none.
func WithPacingRules(rules ...PacingRule) Option {
	return optionFunc(func(c *config) error {
		idx, err := compileRules(rules)
		if err != nil {
			return err
		}
		c.rules, c.policyFunc = idx, nil
		return nil
	})
}

// WithPacingFunc makes f choose the policy of each pacing key: when it
// returns true, its policy is merged over the transport's, as a
// [PacingRule]'s is; when false, the key keeps the transport's. f is
// given keys as [WithPacingRules] matches them; it must be safe for
// concurrent use, quick, and give a key the same answer each time, since a
// [Pacer] may keep the policy of a key while it keeps its state. The
// transport asks it once per request and the Pacer when it needs a key's
// policy. A policy it returns that is invalid (see
// [pace.Policy.Validate]) fails the key's requests with a [*ConfigError]
// naming WithPacingFunc and the key, and they are not sent.
//
// It and [WithPacingRules] make one setting: the later replaces the
// earlier. Nil means none.
func WithPacingFunc(f func(key string) (pace.Policy, bool)) Option {
	return optionFunc(func(c *config) error {
		c.rules, c.policyFunc = nil, f
		return nil
	})
}

// ruleIndex holds the rules by name, for choose: a key's policy is found
// by looking up its host, then each suffix of it that a Domain rule's
// depth allows, longest first; a name is looked up only when some rule's
// name has as many labels. A lookup hashes the name once: a filter of
// a few bits per name, which stays in the processor's caches, rules out
// most names that have no rule, and the others are found by their hash in
// a map and checked against the name.
type ruleIndex struct {
	seed   maphash.Seed
	filter []uint64             // a Bloom filter of the names' hashes, two bits of one word each, 16 bits a name
	names  map[uint64]ruleEntry // by the hash of the name
	depths uint64               // bit n: a rule's name has n labels (bit 63: 63 or more)
	domain uint64               // the same, of the Domain rules' names
	rules  []PacingRule         // canonical, in the order given
}

// ruleEntry is what the rules say of one name: the policy of its Host
// rule and of its Domain rule; nil where there is none. Once merged, both
// are Effective.
type ruleEntry struct {
	name         string
	host, domain *pace.Policy
}

// compileRules checks rules and indexes them, their policies unmerged.
// No rules gives a nil index.
func compileRules(rules []PacingRule) (*ruleIndex, error) {
	if len(rules) == 0 {
		return nil, nil
	}
	canon := make([]PacingRule, len(rules))
	seen := make(map[string]*ruleEntry, len(rules))
	for i, r := range rules {
		bad := func(field string, value any, reason string) error {
			return &ConfigError{Option: "WithPacingRules", Field: fmt.Sprintf("rules[%d]%s", i, field), Value: value, Reason: reason}
		}
		if err := r.Policy.Validate(); err != nil {
			return nil, policyConfigError("WithPacingRules", fmt.Sprintf("rules[%d].Policy", i), err)
		}
		field, name := ".Host", r.Host
		switch {
		case r.Host == "" && r.Domain == "":
			return nil, bad("", r, "sets neither Host nor Domain")
		case r.Host != "" && r.Domain != "":
			return nil, bad("", r, "sets both Host and Domain")
		case r.Domain != "":
			field, name = ".Domain", r.Domain
		}
		h, ok := canonicalHost(name)
		if _, isIP := parseIP(h); !isIP && strings.ContainsAny(h, ":/?#@ ") {
			return nil, bad(field, name, "is not a host name: no scheme, port or path")
		}
		if !ok || strings.HasPrefix(h, ".") || strings.Contains(h, "..") {
			return nil, bad(field, name, "names no host")
		}
		e := seen[h]
		if e == nil {
			e = &ruleEntry{name: h}
			seen[h] = e
		}
		if field == ".Host" {
			if e.host != nil {
				return nil, bad(field, name, "another rule is for this Host")
			}
			p := r.Policy
			e.host, r.Host = &p, h
		} else {
			if _, isIP := parseIP(h); isIP {
				return nil, bad(field, name, "is an IP address: a Host rule is for it")
			}
			if e.domain != nil {
				return nil, bad(field, name, "another rule is for this Domain")
			}
			p := r.Policy
			e.domain, r.Domain = &p, h
		}
		canon[i] = r
	}
	idx := &ruleIndex{rules: canon}
	idx.build(seen, func(p *pace.Policy) *pace.Policy { return p })
	return idx, nil
}

// build indexes entries, their policies mapped by policy. Two names with
// one hash, which a 64-bit hash makes a matter of chance alone, have the
// index built again under another seed.
func (idx *ruleIndex) build(entries map[string]*ruleEntry, policy func(*pace.Policy) *pace.Policy) {
	bits := 64
	for bits < 16*len(entries) {
		bits *= 2
	}
	for !idx.tryBuild(entries, policy, bits) {
	}
}

// tryBuild is build under a new seed, with a filter of bits bits; it
// reports false when two names have one hash.
func (idx *ruleIndex) tryBuild(entries map[string]*ruleEntry, policy func(*pace.Policy) *pace.Policy, bits int) bool {
	idx.seed = maphash.MakeSeed()
	idx.filter = make([]uint64, bits/64)
	idx.names = make(map[uint64]ruleEntry, len(entries))
	idx.depths, idx.domain = 0, 0
	for name, e := range entries {
		h := maphash.String(idx.seed, name)
		if _, dup := idx.names[h]; dup {
			return false
		}
		m := ruleEntry{name: name}
		if e.host != nil {
			m.host = policy(e.host)
		}
		bit := uint64(1) << min(labels(name), 63)
		idx.depths |= bit
		if e.domain != nil {
			m.domain = policy(e.domain)
			idx.domain |= bit
		}
		idx.names[h] = m
		idx.setFilter(h)
	}
	return true
}

// filterBits returns the word of the filter that a hash h falls in and
// the two bits it sets there: one word, so that a look costs one cache
// line at most.
func (idx *ruleIndex) filterBits(h uint64) (word int, bits uint64) {
	word = int(h & uint64(len(idx.filter)-1)) // a power of two
	return word, 1<<(h>>58) | 1<<(h>>52&63)
}

func (idx *ruleIndex) setFilter(h uint64) {
	w, b := idx.filterBits(h)
	idx.filter[w] |= b
}

func (idx *ruleIndex) inFilter(h uint64) bool {
	w, b := idx.filterBits(h)
	return idx.filter[w]&b == b
}

// merge returns the index with each rule's policy merged over base, an
// Effective policy, which a later option may have changed after the rules
// were given.
func (idx *ruleIndex) merge(base pace.Policy) *ruleIndex {
	if idx == nil {
		return nil
	}
	entries := make(map[string]*ruleEntry, len(idx.names))
	for _, e := range idx.names {
		entries[e.name] = &e
	}
	out := &ruleIndex{rules: idx.rules}
	out.build(entries, func(p *pace.Policy) *pace.Policy {
		m := p.Over(base)
		return &m
	})
	return out
}

// labels returns the number of labels of a name.
func labels(name string) int { return strings.Count(name, ".") + 1 }

// lookup returns the entry of name, if a rule names it.
func (idx *ruleIndex) lookup(name string) (ruleEntry, bool) {
	h := maphash.String(idx.seed, name)
	if !idx.inFilter(h) {
		return ruleEntry{}, false
	}
	e, ok := idx.names[h]
	return e, ok && e.name == name
}

// choose returns the policy the rules give key, or nil when none matches.
// It does not allocate.
func (idx *ruleIndex) choose(key string) *pace.Policy {
	host := ruleHost(key)
	n := labels(host) // then the labels of host[i+1:] below, after its first dot
	if idx.depths&(1<<min(n, 63)) != 0 {
		if e, ok := idx.lookup(host); ok {
			if e.host != nil {
				return e.host
			}
			if e.domain != nil {
				return e.domain
			}
		}
	}
	if idx.domain == 0 || mayBeIP(host) {
		return nil
	}
	for i := 0; i < len(host); i++ {
		if host[i] != '.' {
			continue
		}
		n--
		if idx.domain&(1<<min(n, 63)) == 0 {
			continue
		}
		if e, ok := idx.lookup(host[i+1:]); ok && e.domain != nil {
			return e.domain
		}
	}
	return nil
}

// ruleHost returns the host name that rules match key by: the host of a
// "scheme://host:port" key (an IPv6 address without its brackets), or
// the key itself.
func ruleHost(key string) string {
	i := strings.Index(key, "://")
	if i < 0 {
		return key
	}
	h := key[i+3:]
	if strings.HasPrefix(h, "[") {
		if j := strings.IndexByte(h, ']'); j > 0 {
			return h[1:j]
		}
	}
	if j := strings.LastIndexByte(h, ':'); j >= 0 {
		h = h[:j]
	}
	return h
}
