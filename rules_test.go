package polite

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"

	"github.com/polite-go/polite/pace"
)

// TestPacingRulesChoose checks which rule a key gets: a Host rule for its
// host, then the Domain rule of the longest domain that holds it.
func TestPacingRulesChoose(t *testing.T) {
	delay := func(s int) pace.Policy { return pace.Policy{BaseDelay: time.Duration(s) * time.Second} }
	idx, err := compileRules([]PacingRule{
		{Host: "example.com", Policy: delay(10)},
		{Domain: "Example.COM.", Policy: delay(20)},
		{Domain: "sub.example.com", Policy: delay(30)},
		{Domain: "co.uk", Policy: delay(40)},
		{Host: "192.0.2.1", Policy: delay(50)},
		{Host: "2001:DB8::1", Policy: delay(60)},
		{Host: "bücher.example", Policy: delay(70)},
		{Domain: "a.b.c.d.e.f.g.h", Policy: delay(80)},
	})
	if err != nil {
		t.Fatal(err)
	}
	idx = idx.merge(defaultPacing)
	for _, c := range []struct {
		key  string
		want int // the base delay in seconds; 1, the default, for no rule
	}{
		{"example.com", 10},
		{"www.example.com", 20},
		{"a.b.www.example.com", 20},
		{"sub.example.com", 30},
		{"a.sub.example.com", 30},
		{"xsub.example.com", 20},
		{"notexample.com", 1},
		{"example.com.evil", 1},
		{"com", 1},
		{"shop.example.co.uk", 40},
		{"co.uk", 40},
		{"https://www.example.com:443", 20},
		{"http://example.com:80", 10},
		{"http://[2001:db8::1]:80", 60},
		{"2001:db8::1", 60},
		{"192.0.2.1", 50},
		{"10.192.0.2.1", 1}, // an address is matched whole
		{"xn--bcher-kva.example", 70},
		{"z.a.b.c.d.e.f.g.h", 80},
		{"b.c.d.e.f.g.h", 1},
		{"", 1},
		{".", 1},
		{"example.com.", 1}, // keys are canonical: a trailing dot is another name
	} {
		got := time.Second
		if p := idx.choose(c.key); p != nil {
			got = p.BaseDelay
		}
		if got != time.Duration(c.want)*time.Second {
			t.Errorf("choose(%q): base delay %v; want %ds", c.key, got, c.want)
		}
	}
}

// TestPacingRulesInvalid checks the rules WithPacingRules refuses, each
// with the field of the rule at fault.
func TestPacingRulesInvalid(t *testing.T) {
	ok := pace.Policy{BaseDelay: time.Second}
	for _, c := range []struct {
		name  string
		rules []PacingRule
		field string
		value any
	}{
		{"neither", []PacingRule{{Host: "a.example"}, {Policy: ok}}, "rules[1]", PacingRule{Policy: ok}},
		{"both", []PacingRule{{Host: "a.example", Domain: "a.example"}}, "rules[0]", PacingRule{Host: "a.example", Domain: "a.example"}},
		{"a bad policy", []PacingRule{{Host: "a.example"}, {Domain: "b.example", Policy: pace.Policy{Jitter: -0.5}}}, "rules[1].Policy.Jitter", -0.5},
		{"a negative bandwidth", []PacingRule{{Host: "a.example", Policy: pace.Policy{MaxBandwidth: -5}}}, "rules[0].Policy.MaxBandwidth", int64(-5)},
		{"two rules for a host", []PacingRule{{Host: "a.example"}, {Host: "A.Example."}}, "rules[1].Host", "A.Example."},
		{"two rules for a domain", []PacingRule{{Domain: "a.example"}, {Host: "a.example"}, {Domain: "a.example"}}, "rules[2].Domain", "a.example"},
		{"an address as a domain", []PacingRule{{Domain: "192.0.2.1"}}, "rules[0].Domain", "192.0.2.1"},
		{"an empty label", []PacingRule{{Domain: "a..example"}}, "rules[0].Domain", "a..example"},
		{"a leading dot", []PacingRule{{Domain: ".example.com"}}, "rules[0].Domain", ".example.com"},
		{"the root", []PacingRule{{Host: "."}}, "rules[0].Host", "."},
		{"a port", []PacingRule{{Host: "example.com:8080"}}, "rules[0].Host", "example.com:8080"},
		{"a URL", []PacingRule{{Domain: "https://example.com/"}}, "rules[0].Domain", "https://example.com/"},
	} {
		err := Validate(WithPacingRules(c.rules...))
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Option != "WithPacingRules" || ce.Field != c.field || ce.Value != c.value {
			t.Errorf("%s: %v; want a *ConfigError of WithPacingRules, field %s, value %v", c.name, err, c.field, c.value)
		}
	}
	if err := Validate(WithPacingRules()); err != nil {
		t.Errorf("no rules: %v", err)
	}
}

// TestPacingRulesMerge checks that a rule's policy is merged over the
// transport's as it stands once every option is applied, and that of
// WithPacingRules and WithPacingFunc the later wins.
func TestPacingRulesMerge(t *testing.T) {
	rules := WithPacingRules(PacingRule{Domain: "slow.example", Policy: pace.Policy{BaseDelay: time.Minute, MaxInFlight: pace.None}})
	fn := WithPacingFunc(func(key string) (pace.Policy, bool) {
		return pace.Policy{BaseDelay: time.Hour}, key == "slow.example"
	})
	for _, c := range []struct {
		name string
		opts []Option
		want pace.Policy
	}{
		{"rules, then WithPacing", []Option{rules, WithPacing(pace.Policy{Jitter: pace.None, BaseDelay: 2 * time.Second})},
			with(defaultPacing, func(p *pace.Policy) { p.BaseDelay, p.Jitter, p.MaxInFlight = time.Minute, pace.None, pace.None })},
		{"APIDefaults, then rules", []Option{APIDefaults(), rules},
			with(defaultPacing, func(p *pace.Policy) {
				p.BaseDelay, p.Jitter, p.LatencyFactor, p.MaxInFlight, p.BackoffBase, p.MaxBackoff, p.RecoverAfter = time.Minute, pace.None, pace.None, pace.None, 50*time.Millisecond, time.Minute, 1
			})},
		{"rules, then a func", []Option{rules, fn}, with(defaultPacing, func(p *pace.Policy) { p.BaseDelay = time.Hour })},
		{"a func, then rules", []Option{fn, rules}, with(defaultPacing, func(p *pace.Policy) { p.BaseDelay, p.MaxInFlight = time.Minute, pace.None })},
		{"rules, then none", []Option{rules, WithPacingRules()}, defaultPacing},
		{"a func, then nil", []Option{fn, WithPacingFunc(nil)}, defaultPacing},
	} {
		tr := New(http.DefaultTransport, c.opts...)
		got, err := tr.pacing.For("www.slow.example")
		if c.name == "rules, then a func" || c.name == "a func, then nil" {
			got, err = tr.pacing.For("slow.example")
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
}

func with(p pace.Policy, edit func(*pace.Policy)) pace.Policy {
	edit(&p)
	return p
}

// TestPacingFuncInvalid checks that a request whose key WithPacingFunc
// gives an invalid policy fails with a *ConfigError, and is not sent.
func TestPacingFuncInvalid(t *testing.T) {
	base := site("")
	tr := New(base, WithPacingFunc(func(key string) (pace.Policy, bool) {
		return pace.Policy{BaseDelay: -3}, key == "bad.example"
	}), WithRobotsMode(RobotsOff), WithPacing(pace.Policy{BaseDelay: pace.None}))
	_, err := get(tr, "http://bad.example/", "")
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Option != "WithPacingFunc" || ce.Field != "BaseDelay" ||
		err.Error() != `polite: WithPacingFunc: BaseDelay -3ns: must not be negative (None turns it off) (the policy of key "bad.example")` {
		t.Errorf("RoundTrip = %v; want a *ConfigError of WithPacingFunc", err)
	}
	resp, err := get(tr, "http://good.example/", "")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := base.requests(); len(got) != 1 || got[0] != "http://good.example/" {
		t.Errorf("sent %q; want only http://good.example/", got)
	}
}

// benchRules returns n rules, half Host and half Domain, on names of two
// to four labels, and keys that a Host rule, a Domain rule and no rule
// match.
func benchRules(n int) (rules []PacingRule, exact, domain, miss []string) {
	r := rand.New(rand.NewPCG(1, 2))
	seq := 0
	name := func(labels int) string {
		seq++
		s := fmt.Sprintf("site%d", seq)
		for range labels - 2 {
			s = fmt.Sprintf("l%d.%s", r.IntN(100), s)
		}
		return s + []string{".com", ".org", ".co.uk", ".de"}[r.IntN(4)]
	}
	for i := range n {
		p := pace.Policy{BaseDelay: time.Duration(i+1) * time.Millisecond}
		if i%2 == 0 {
			h := name(2 + r.IntN(2))
			rules = append(rules, PacingRule{Host: h, Policy: p})
			exact = append(exact, h)
		} else {
			d := name(2 + r.IntN(2))
			rules = append(rules, PacingRule{Domain: d, Policy: p})
			domain = append(domain, "www.a."+d)
		}
		miss = append(miss, "www.nosuch"+name(3))
	}
	return rules, exact, domain, miss
}

// BenchmarkPacingRules is the cost of choosing a key's policy among N
// rules: a key that a Host rule matches, a subdomain of a Domain rule, a
// key that no rule matches, and an origin key. Each run cycles through
// 1,000 keys, as a crawler cycles through its hosts.
func BenchmarkPacingRules(b *testing.B) {
	for _, n := range []int{10, 10_000} {
		rules, exact, domain, miss := benchRules(n)
		tr := New(http.DefaultTransport, WithPacingRules(rules...))
		for _, c := range []struct {
			name string
			keys []string
		}{
			{"host", exact},
			{"domain", domain},
			{"none", miss},
			{"origin", func() []string {
				var o []string
				for _, k := range domain {
					o = append(o, "https://"+k+":443")
				}
				return o
			}()},
		} {
			keys := c.keys[:min(len(c.keys), 1000)]
			b.Run(fmt.Sprintf("rules=%d/%s", n, c.name), func(b *testing.B) {
				i := 0
				loopCPU(b, func() {
					if _, err := tr.pacing.For(keys[i%len(keys)]); err != nil {
						b.Fatal(err)
					}
					i++
				})
			})
		}
	}
}
