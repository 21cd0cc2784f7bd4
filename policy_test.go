package polite

import (
	"testing"
	"time"

	"github.com/polite-go/polite/pace"
)

// TestMerge checks that WithPacing and WithLimits set the fields they are
// given and keep the others, what earlier options set or the defaults, so
// that the last option wins field by field.
func TestMerge(t *testing.T) {
	api := pace.Policy{BaseDelay: pace.None, Jitter: pace.None, LatencyFactor: pace.None, MaxDelay: time.Minute,
		MaxCrawlDelay: time.Minute, BackoffBase: 50 * time.Millisecond, MaxBackoff: time.Minute, MaxInFlight: pace.None, RecoverAfter: 1}
	with := func(p pace.Policy, edit func(*pace.Policy)) pace.Policy {
		edit(&p)
		return p
	}
	tests := []struct {
		name       string
		opts       []Option
		wantPacing pace.Policy // zero: the default
		wantLimits Limits      // zero: the default
	}{
		{"none", nil, pace.Policy{}, Limits{}},
		{"one field", []Option{WithPacing(pace.Policy{MaxDelay: 3 * time.Second})},
			with(pace.Policy{}.Effective(), func(p *pace.Policy) { p.MaxDelay = 3 * time.Second }), Limits{}},
		{"field by field", []Option{WithPacing(pace.Policy{BaseDelay: 2 * time.Second}), WithPacing(pace.Policy{Jitter: pace.None})},
			with(pace.Policy{}.Effective(), func(p *pace.Policy) { p.BaseDelay, p.Jitter = 2*time.Second, pace.None }), Limits{}},
		{"the last wins", []Option{WithPacing(pace.Policy{BaseDelay: 2 * time.Second}), WithPacing(pace.Policy{BaseDelay: pace.None})},
			with(pace.Policy{}.Effective(), func(p *pace.Policy) { p.BaseDelay = pace.None }), Limits{}},
		{"APIDefaults", []Option{APIDefaults()}, api, Limits{}},
		{"after APIDefaults", []Option{APIDefaults(), WithPacing(pace.Policy{MaxInFlight: 64})},
			with(api, func(p *pace.Policy) { p.MaxInFlight = 64 }), Limits{}},
		{"before APIDefaults, a field it sets", []Option{WithPacing(pace.Policy{MaxInFlight: 64, RecoverAfter: 3}), APIDefaults()}, api, Limits{}},
		{"before APIDefaults, a field it leaves", []Option{WithPacing(pace.Policy{MaxCrawlDelay: 5 * time.Second}), APIDefaults()},
			with(api, func(p *pace.Policy) { p.MaxCrawlDelay = 5 * time.Second }), Limits{}},
		{"one limit", []Option{WithLimits(Limits{MaxKeys: 5})}, pace.Policy{}, Limits{MaxKeys: 5, MaxOrigins: 10_000, RobotsCacheBytes: 256 << 20, MaxResolved: 10_000}},
		{"limits field by field", []Option{WithLimits(Limits{MaxKeys: 5, RobotsCacheBytes: 1 << 20}), WithLimits(Limits{MaxOrigins: 7})},
			pace.Policy{}, Limits{MaxKeys: 5, MaxOrigins: 7, RobotsCacheBytes: 1 << 20, MaxResolved: 10_000}},
		{"the last limit wins", []Option{WithLimits(Limits{MaxKeys: 5, MaxOrigins: 6}), WithLimits(Limits{MaxKeys: 9})},
			pace.Policy{}, Limits{MaxKeys: 9, MaxOrigins: 6, RobotsCacheBytes: 256 << 20, MaxResolved: 10_000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := configure(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantPacing == (pace.Policy{}) {
				tt.wantPacing = pace.Policy{}.Effective()
			}
			if tt.wantLimits == (Limits{}) {
				tt.wantLimits = defaultLimits
			}
			if c.pacing != tt.wantPacing || c.limits != tt.wantLimits {
				t.Errorf("pacing %+v, limits %+v; want %+v, %+v", c.pacing, c.limits, tt.wantPacing, tt.wantLimits)
			}
		})
	}
}
