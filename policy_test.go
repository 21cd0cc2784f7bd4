package polite

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func TestPacingPolicyValidate(t *testing.T) {
	tests := []struct {
		name      string
		p         PacingPolicy
		wantField string // "" for valid
	}{
		{"zero", PacingPolicy{}, ""},
		{"every field None", PacingPolicy{BaseDelay: None, Jitter: None, LatencyFactor: None, MaxDelay: None,
			MaxCrawlDelay: None, BackoffBase: None, MaxBackoff: None, MaxInFlight: None}, ""},
		{"every field set", PacingPolicy{BaseDelay: 1, Jitter: 0.1, LatencyFactor: 3, MaxDelay: 1,
			MaxCrawlDelay: 1, BackoffBase: 1, MaxBackoff: 1, MaxInFlight: 1}, ""},
		{"negative BaseDelay", PacingPolicy{BaseDelay: -time.Second}, "BaseDelay"},
		{"negative Jitter", PacingPolicy{Jitter: -0.5}, "Jitter"},
		{"NaN Jitter", PacingPolicy{Jitter: math.NaN()}, "Jitter"},
		{"infinite Jitter", PacingPolicy{Jitter: math.Inf(1)}, "Jitter"},
		{"negative LatencyFactor", PacingPolicy{LatencyFactor: -2}, "LatencyFactor"},
		{"NaN LatencyFactor", PacingPolicy{LatencyFactor: math.NaN()}, "LatencyFactor"},
		{"infinite LatencyFactor", PacingPolicy{LatencyFactor: math.Inf(-1)}, "LatencyFactor"},
		{"negative MaxDelay", PacingPolicy{MaxDelay: -2}, "MaxDelay"},
		{"negative MaxCrawlDelay", PacingPolicy{MaxCrawlDelay: -2}, "MaxCrawlDelay"},
		{"negative BackoffBase", PacingPolicy{BackoffBase: -2}, "BackoffBase"},
		{"negative MaxBackoff", PacingPolicy{MaxBackoff: -2}, "MaxBackoff"},
		{"negative MaxInFlight", PacingPolicy{MaxInFlight: -2}, "MaxInFlight"},
		{"the first invalid field", PacingPolicy{MaxDelay: -2, MaxInFlight: -2}, "MaxDelay"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.Validate()
			if tt.wantField == "" {
				if err != nil {
					t.Errorf("Validate() = %v; want nil", err)
				}
				return
			}
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Field != tt.wantField || ce.Option != "PacingPolicy" || !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("Validate() = %v; want a *ConfigError of PacingPolicy naming %s", err, tt.wantField)
			}
		})
	}
}

func TestPacingPolicyEffective(t *testing.T) {
	tests := []struct {
		name string
		p    PacingPolicy
		want PacingPolicy
	}{
		{"zero: the defaults", PacingPolicy{}, PacingPolicy{BaseDelay: time.Second, Jitter: 0.5, LatencyFactor: 2,
			MaxDelay: time.Minute, MaxCrawlDelay: time.Minute, BackoffBase: 5 * time.Second, MaxBackoff: 10 * time.Minute, MaxInFlight: 1, RecoverAfter: 5}},
		{"None kept", PacingPolicy{BaseDelay: None, Jitter: None, MaxInFlight: None}, PacingPolicy{BaseDelay: None, Jitter: None, LatencyFactor: 2,
			MaxDelay: time.Minute, MaxCrawlDelay: time.Minute, BackoffBase: 5 * time.Second, MaxBackoff: 10 * time.Minute, MaxInFlight: None, RecoverAfter: 5}},
		{"values kept", PacingPolicy{MaxDelay: 3 * time.Second, LatencyFactor: 0.5, MaxInFlight: 4}, PacingPolicy{BaseDelay: time.Second, Jitter: 0.5, LatencyFactor: 0.5,
			MaxDelay: 3 * time.Second, MaxCrawlDelay: time.Minute, BackoffBase: 5 * time.Second, MaxBackoff: 10 * time.Minute, MaxInFlight: 4, RecoverAfter: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.p.Effective()
			if got != tt.want {
				t.Errorf("Effective() = %+v; want %+v", got, tt.want)
			}
			if again := got.Effective(); again != got {
				t.Errorf("Effective() of it = %+v; want it unchanged: Effective is idempotent", again)
			}
		})
	}
}

// TestMerge checks that WithPacing and WithLimits set the fields they are
// given and keep the others, what earlier options set or the defaults, so
// that the last option wins field by field.
func TestMerge(t *testing.T) {
	api := PacingPolicy{BaseDelay: None, Jitter: None, LatencyFactor: None, MaxDelay: time.Minute,
		MaxCrawlDelay: time.Minute, BackoffBase: 50 * time.Millisecond, MaxBackoff: time.Minute, MaxInFlight: None, RecoverAfter: 1}
	with := func(p PacingPolicy, edit func(*PacingPolicy)) PacingPolicy {
		edit(&p)
		return p
	}
	tests := []struct {
		name       string
		opts       []Option
		wantPacing PacingPolicy // zero: the default
		wantLimits Limits       // zero: the default
	}{
		{"none", nil, PacingPolicy{}, Limits{}},
		{"one field", []Option{WithPacing(PacingPolicy{MaxDelay: 3 * time.Second})},
			with(defaultPacing, func(p *PacingPolicy) { p.MaxDelay = 3 * time.Second }), Limits{}},
		{"field by field", []Option{WithPacing(PacingPolicy{BaseDelay: 2 * time.Second}), WithPacing(PacingPolicy{Jitter: None})},
			with(defaultPacing, func(p *PacingPolicy) { p.BaseDelay, p.Jitter = 2*time.Second, None }), Limits{}},
		{"the last wins", []Option{WithPacing(PacingPolicy{BaseDelay: 2 * time.Second}), WithPacing(PacingPolicy{BaseDelay: None})},
			with(defaultPacing, func(p *PacingPolicy) { p.BaseDelay = None }), Limits{}},
		{"APIDefaults", []Option{APIDefaults()}, api, Limits{}},
		{"after APIDefaults", []Option{APIDefaults(), WithPacing(PacingPolicy{MaxInFlight: 64})},
			with(api, func(p *PacingPolicy) { p.MaxInFlight = 64 }), Limits{}},
		{"before APIDefaults, a field it sets", []Option{WithPacing(PacingPolicy{MaxInFlight: 64, RecoverAfter: 3}), APIDefaults()}, api, Limits{}},
		{"before APIDefaults, a field it leaves", []Option{WithPacing(PacingPolicy{MaxCrawlDelay: 5 * time.Second}), APIDefaults()},
			with(api, func(p *PacingPolicy) { p.MaxCrawlDelay = 5 * time.Second }), Limits{}},
		{"one limit", []Option{WithLimits(Limits{MaxKeys: 5})}, PacingPolicy{}, Limits{MaxKeys: 5, MaxOrigins: 10_000, RobotsCacheBytes: 256 << 20, MaxResolved: 10_000}},
		{"limits field by field", []Option{WithLimits(Limits{MaxKeys: 5, RobotsCacheBytes: 1 << 20}), WithLimits(Limits{MaxOrigins: 7})},
			PacingPolicy{}, Limits{MaxKeys: 5, MaxOrigins: 7, RobotsCacheBytes: 1 << 20, MaxResolved: 10_000}},
		{"the last limit wins", []Option{WithLimits(Limits{MaxKeys: 5, MaxOrigins: 6}), WithLimits(Limits{MaxKeys: 9})},
			PacingPolicy{}, Limits{MaxKeys: 9, MaxOrigins: 6, RobotsCacheBytes: 256 << 20, MaxResolved: 10_000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := configure(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantPacing == (PacingPolicy{}) {
				tt.wantPacing = defaultPacing
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

// TestNewMemoryPacer checks that NewMemoryPacer runs the Effective policy,
// so that a zero PacingPolicy paces by the defaults, and that it reads
// None as each field says.
func TestNewMemoryPacer(t *testing.T) {
	tests := []struct {
		name    string
		p       PacingPolicy
		hold    int           // requests started and held before the one timed
		latency time.Duration // of each held request
		delay   time.Duration // Crawl-delay of every request
		signal  bool          // the held requests end with a backoff signal
		want    time.Duration // start of the timed request
	}{
		{"zero: the default pace", PacingPolicy{Jitter: None}, 1, 0, 0, false, time.Second},
		{"zero: one in flight", PacingPolicy{Jitter: None}, 1, 5 * time.Second, 0, false, 10 * time.Second},
		{"BaseDelay None", PacingPolicy{BaseDelay: None, Jitter: None, LatencyFactor: None}, 1, 0, 0, false, 0},
		{"MaxInFlight None: no cap", PacingPolicy{BaseDelay: None, MaxInFlight: None}, 100, time.Hour, 0, false, 0},
		{"MaxCrawlDelay None: Crawl-delay ignored", PacingPolicy{Jitter: None, MaxCrawlDelay: None}, 1, 0, 30 * time.Second, false, time.Second},
		{"MaxDelay None: no adaptive part", PacingPolicy{Jitter: None, MaxDelay: None}, 1, 3 * time.Second, 0, false, 3 * time.Second},
		{"a signal: a pause", PacingPolicy{Jitter: None}, 1, 0, 0, true, 5 * time.Second},
		{"MaxBackoff None: no pause, the pace doubled", PacingPolicy{Jitter: None, MaxBackoff: None}, 1, 0, 0, true, 2 * time.Second},
		{"BackoffBase None: no pause, the pace doubled", PacingPolicy{Jitter: None, BackoffBase: None}, 1, 0, 0, true, 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p, err := NewMemoryPacer(Policies{Default: tt.p}, 0)
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(t.Context(), 2*time.Hour)
				defer cancel()
				t0 := time.Now()
				o := Outcome{Class: OutcomeSuccess}
				if tt.signal {
					o.Class = OutcomeSignal
				}
				var held sync.WaitGroup
				defer held.Wait()
				for range tt.hold {
					l, err := p.Acquire(ctx, "k", "", tt.delay)
					if err != nil {
						t.Fatal(err)
					}
					held.Go(func() {
						time.Sleep(tt.latency)
						l.Release(o)
					})
				}
				synctest.Wait()
				l, err := p.Acquire(ctx, "k", "", tt.delay)
				if err != nil {
					t.Fatalf("Acquire = %v; want a start", err)
				}
				l.Release(Outcome{Class: OutcomeSuccess})
				if got := time.Since(t0); got != tt.want {
					t.Errorf("the request after %d started at +%v; want +%v", tt.hold, got, tt.want)
				}
			})
		})
	}
}

func TestNewMemoryPacerInvalid(t *testing.T) {
	tests := []struct {
		name      string
		p         PacingPolicy
		maxKeys   int
		wantField string
	}{
		{"invalid policy", PacingPolicy{BaseDelay: -2}, 0, "BaseDelay"},
		{"negative maxKeys", PacingPolicy{}, -1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewMemoryPacer(Policies{Default: tt.p}, tt.maxKeys)
			var ce *ConfigError
			if p != nil || !errors.As(err, &ce) || ce.Option != "NewMemoryPacer" || ce.Field != tt.wantField {
				t.Errorf("NewMemoryPacer = %v, %v; want a *ConfigError of NewMemoryPacer naming %q", p, err, tt.wantField)
			}
		})
	}
}
