package pace

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func TestPolicyValidate(t *testing.T) {
	tests := []struct {
		name      string
		p         Policy
		wantField string // "" for valid
	}{
		{"zero", Policy{}, ""},
		{"every field None", Policy{BaseDelay: None, Jitter: None, LatencyFactor: None, MaxDelay: None,
			MaxCrawlDelay: None, BackoffBase: None, MaxBackoff: None, MaxInFlight: None}, ""},
		{"every field set", Policy{BaseDelay: 1, Jitter: 0.1, LatencyFactor: 3, MaxDelay: 1,
			MaxCrawlDelay: 1, BackoffBase: 1, MaxBackoff: 1, MaxInFlight: 1}, ""},
		{"negative BaseDelay", Policy{BaseDelay: -time.Second}, "BaseDelay"},
		{"negative Jitter", Policy{Jitter: -0.5}, "Jitter"},
		{"NaN Jitter", Policy{Jitter: math.NaN()}, "Jitter"},
		{"infinite Jitter", Policy{Jitter: math.Inf(1)}, "Jitter"},
		{"negative LatencyFactor", Policy{LatencyFactor: -2}, "LatencyFactor"},
		{"NaN LatencyFactor", Policy{LatencyFactor: math.NaN()}, "LatencyFactor"},
		{"infinite LatencyFactor", Policy{LatencyFactor: math.Inf(-1)}, "LatencyFactor"},
		{"negative MaxDelay", Policy{MaxDelay: -2}, "MaxDelay"},
		{"negative MaxCrawlDelay", Policy{MaxCrawlDelay: -2}, "MaxCrawlDelay"},
		{"negative BackoffBase", Policy{BackoffBase: -2}, "BackoffBase"},
		{"negative MaxBackoff", Policy{MaxBackoff: -2}, "MaxBackoff"},
		{"negative MaxInFlight", Policy{MaxInFlight: -2}, "MaxInFlight"},
		{"the first invalid field", Policy{MaxDelay: -2, MaxInFlight: -2}, "MaxDelay"},
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
			var pe *PolicyError
			if !errors.As(err, &pe) || pe.Field != tt.wantField || !errors.Is(err, ErrInvalidPolicy) {
				t.Errorf("Validate() = %v; want a *PolicyError naming %s", err, tt.wantField)
			}
		})
	}
}

func TestPolicyEffective(t *testing.T) {
	tests := []struct {
		name string
		p    Policy
		want Policy
	}{
		{"zero: the defaults", Policy{}, Policy{BaseDelay: time.Second, Jitter: 0.5, LatencyFactor: 2,
			MaxDelay: time.Minute, MaxCrawlDelay: time.Minute, BackoffBase: 5 * time.Second, MaxBackoff: 10 * time.Minute, MaxInFlight: 1, RecoverAfter: 5}},
		{"None kept", Policy{BaseDelay: None, Jitter: None, MaxInFlight: None}, Policy{BaseDelay: None, Jitter: None, LatencyFactor: 2,
			MaxDelay: time.Minute, MaxCrawlDelay: time.Minute, BackoffBase: 5 * time.Second, MaxBackoff: 10 * time.Minute, MaxInFlight: None, RecoverAfter: 5}},
		{"values kept", Policy{MaxDelay: 3 * time.Second, LatencyFactor: 0.5, MaxInFlight: 4}, Policy{BaseDelay: time.Second, Jitter: 0.5, LatencyFactor: 0.5,
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

// TestNewMemory checks that NewMemory runs the Effective policy,
// so that a zero Policy paces by the defaults, and that it reads
// None as each field says.
func TestNewMemory(t *testing.T) {
	tests := []struct {
		name    string
		p       Policy
		hold    int           // requests started and held before the one timed
		latency time.Duration // of each held request
		delay   time.Duration // Crawl-delay of every request
		signal  bool          // the held requests end with a backoff signal
		want    time.Duration // start of the timed request
	}{
		{"zero: the default pace", Policy{Jitter: None}, 1, 0, 0, false, time.Second},
		{"zero: one in flight", Policy{Jitter: None}, 1, 5 * time.Second, 0, false, 10 * time.Second},
		{"BaseDelay None", Policy{BaseDelay: None, Jitter: None, LatencyFactor: None}, 1, 0, 0, false, 0},
		{"MaxInFlight None: no cap", Policy{BaseDelay: None, MaxInFlight: None}, 100, time.Hour, 0, false, 0},
		{"MaxCrawlDelay None: Crawl-delay ignored", Policy{Jitter: None, MaxCrawlDelay: None}, 1, 0, 30 * time.Second, false, time.Second},
		{"MaxDelay None: no adaptive part", Policy{Jitter: None, MaxDelay: None}, 1, 3 * time.Second, 0, false, 3 * time.Second},
		{"a signal: a pause", Policy{Jitter: None}, 1, 0, 0, true, 5 * time.Second},
		{"MaxBackoff None: no pause, the pace doubled", Policy{Jitter: None, MaxBackoff: None}, 1, 0, 0, true, 2 * time.Second},
		{"BackoffBase None: no pause, the pace doubled", Policy{Jitter: None, BackoffBase: None}, 1, 0, 0, true, 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p, err := NewMemory(Config{Policy: tt.p})
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(t.Context(), 2*time.Hour)
				defer cancel()
				t0 := time.Now()
				o := Outcome{Class: Success}
				if tt.signal {
					o.Class = Signal
				}
				var held sync.WaitGroup
				defer held.Wait()
				for range tt.hold {
					l, err := p.Acquire(ctx, Request{Key: "k", CrawlDelay: tt.delay})
					if err != nil {
						t.Fatal(err)
					}
					held.Go(func() {
						time.Sleep(tt.latency)
						p.Release(l, o)
					})
				}
				synctest.Wait()
				l, err := p.Acquire(ctx, Request{Key: "k", CrawlDelay: tt.delay})
				if err != nil {
					t.Fatalf("Acquire = %v; want a start", err)
				}
				p.Release(l, Outcome{Class: Success})
				if got := time.Since(t0); got != tt.want {
					t.Errorf("the request after %d started at +%v; want +%v", tt.hold, got, tt.want)
				}
			})
		})
	}
}

func TestNewMemoryInvalid(t *testing.T) {
	tests := []struct {
		name      string
		c         Config
		wantField string
	}{
		{"invalid policy", Config{Policy: Policy{BaseDelay: -2}}, "BaseDelay"},
		{"negative MaxKeys", Config{MaxKeys: -1}, "MaxKeys"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewMemory(tt.c)
			var pe *PolicyError
			if p != nil || !errors.As(err, &pe) || pe.Field != tt.wantField || !errors.Is(err, ErrInvalidPolicy) {
				t.Errorf("NewMemory = %v, %v; want a *PolicyError naming %q", p, err, tt.wantField)
			}
		})
	}
}

// TestConfigFor checks Config.For: Override merged over Policy, an invalid
// override, which runs Policy and says why, and a zero Config.
func TestConfigFor(t *testing.T) {
	c := Config{Policy: Policy{Jitter: None}, Override: func(key string) (Policy, bool) {
		switch key {
		case "bad":
			return Policy{BaseDelay: -5}, true
		case "own":
			return Policy{BaseDelay: time.Minute}, true
		}
		return Policy{BaseDelay: time.Hour}, false
	}}
	def := Policy{Jitter: None}.Effective()
	own := def
	own.BaseDelay = time.Minute
	for _, tt := range []struct {
		key     string
		want    Policy
		wantErr bool
	}{{"own", own, false}, {"bad", def, true}, {"other", def, false}} {
		got, err := c.For(tt.key)
		if got != tt.want || (err != nil) != tt.wantErr || tt.wantErr && !errors.Is(err, ErrInvalidPolicy) {
			t.Errorf("For(%q) = %+v, %v; want %+v, an error %v", tt.key, got, err, tt.want, tt.wantErr)
		}
	}
	if got, err := (&Config{}).For("any"); got != defaults || err != nil {
		t.Errorf("For of a zero Config = %+v, %v; want the defaults", got, err)
	}
}
