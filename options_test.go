package polite

import (
	"context"
	"errors"
	"math"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/polite-go/polite/pace"
)

// TestInvalidOptions checks that an option given an invalid value makes
// Validate return a *ConfigError naming it, and New panic with that error.
func TestInvalidOptions(t *testing.T) {
	tests := []struct {
		name   string
		opt    Option
		option string // the ConfigError's
		field  string
		value  any
	}{
		{"negative BaseDelay", WithPacing(pace.Policy{BaseDelay: -2}), "WithPacing", "BaseDelay", time.Duration(-2)},
		{"negative Jitter", WithPacing(pace.Policy{Jitter: -0.1}), "WithPacing", "Jitter", -0.1},
		{"infinite LatencyFactor", WithPacing(pace.Policy{LatencyFactor: math.Inf(1)}), "WithPacing", "LatencyFactor", math.Inf(1)},
		{"negative MaxInFlight", WithPacing(pace.Policy{BaseDelay: pace.None, MaxInFlight: -8}), "WithPacing", "MaxInFlight", -8},
		{"zero robots.txt TTL", WithRobotsTTL(0), "WithRobotsTTL", "", time.Duration(0)},
		{"negative robots.txt timeout", WithRobotsTimeout(-1), "WithRobotsTimeout", "", time.Duration(-1)},
		{"unknown failure policy", WithRobotsFailure(FailurePolicy(7), FailClosed), "WithRobotsFailure", "", FailurePolicy(7)},
		{"unknown robots mode", WithRobotsMode(RobotsMode(7)), "WithRobotsMode", "", RobotsMode(7)},
		{"negative MaxKeys", WithLimits(Limits{MaxKeys: -1}), "WithLimits", "MaxKeys", -1},
		{"negative MaxOrigins", WithLimits(Limits{MaxKeys: 5, MaxOrigins: -1}), "WithLimits", "MaxOrigins", -1},
		{"negative RobotsCacheBytes", WithLimits(Limits{RobotsCacheBytes: -1}), "WithLimits", "RobotsCacheBytes", int64(-1)},
		{"negative MaxResolved", WithLimits(Limits{MaxResolved: -1}), "WithLimits", "MaxResolved", -1},
		{"nil pacing key", WithPacingKey(nil), "WithPacingKey", "", nil},
		{"nil pacer", WithPacer(nil), "WithPacer", "", nil},
		{"nil robots store", WithRobotsStore(nil), "WithRobotsStore", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(WithUserAgent("Bot/1"), tt.opt, WithRobotsTTL(-5))
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("Validate = %v; want a *ConfigError", err)
			}
			if ce.Option != tt.option || ce.Field != tt.field || ce.Value != tt.value {
				t.Errorf("Validate = %#v; want Option %q, Field %q, Value %v: the first invalid option", ce, tt.option, tt.field, tt.value)
			}
			if !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("errors.Is(%v, ErrInvalidConfig) = false", err)
			}
			defer func() {
				if p, ok := recover().(*ConfigError); !ok || *p != *ce {
					t.Errorf("New panicked with %#v; want %#v", p, ce)
				}
			}()
			New(http.DefaultTransport, tt.opt)
		})
	}
}

func TestValidOptions(t *testing.T) {
	if err := Validate(); err != nil {
		t.Errorf("Validate() = %v; want nil", err)
	}
	if err := Validate(WithUserAgent("Bot/1"), APIDefaults(), WithRobotsTTL(time.Hour), WithEvents(nil), WithLogger(nil)); err != nil {
		t.Errorf("Validate = %v; want nil", err)
	}
}

func TestConfigErrorText(t *testing.T) {
	tests := []struct {
		err  *ConfigError
		want string
	}{
		{&ConfigError{Option: "WithPacing", Field: "BaseDelay", Value: -5 * time.Second, Reason: "must not be negative (pace.None turns it off)"},
			"polite: WithPacing: BaseDelay -5s: must not be negative (pace.None turns it off)"},
		{&ConfigError{Option: "WithRobotsTTL", Value: time.Duration(0), Reason: "must be positive"},
			"polite: WithRobotsTTL: 0s: must be positive"},
		{&ConfigError{Option: "WithPacingKey", Reason: "must not be nil"},
			"polite: WithPacingKey: nil: must not be nil"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q; want %q", got, tt.want)
			}
		})
	}
}

// TestLimitsApart checks that MaxKeys bounds the pacer's keys and
// MaxOrigins the robots.txt cache's origins, each alone.
func TestLimitsApart(t *testing.T) {
	tests := []struct {
		name               string
		limits             Limits
		wantKeys, wantOrig int
	}{
		{"keys bounded", Limits{MaxKeys: 1}, 1, 3},
		{"origins bounded", Limits{MaxOrigins: 1}, 3, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := New(site(""), opts(WithLimits(tt.limits))...)
				for _, u := range []string{"http://a/", "http://b/", "http://c/"} {
					time.Sleep(time.Hour) // past every pace, and every robots.txt's failure lifetime
					resp, err := get(tr, u, "")
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
				}
				if ks, _ := tr.stats.Stats(context.Background()); len(ks) != tt.wantKeys {
					t.Errorf("%d keys kept; want %d", len(ks), tt.wantKeys)
				}
				if got := int(tr.robots.size.Load()); got != tt.wantOrig {
					t.Errorf("%d origins cached; want %d", got, tt.wantOrig)
				}
			})
		})
	}
}
