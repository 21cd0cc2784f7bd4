package polite

import (
	"errors"
	"net/http"
	"testing"
	"time"
)

// TestInvalidOptions checks that an option given an invalid value makes
// Validate return a *ConfigError naming it, and New panic with that error.
func TestInvalidOptions(t *testing.T) {
	tests := []struct {
		name   string
		opt    Option
		option string // the ConfigError's
		value  any
	}{
		{"negative base delay", WithBaseDelay(-1), "WithBaseDelay", time.Duration(-1)},
		{"negative jitter", WithJitter(-0.1), "WithJitter", -0.1},
		{"negative max delay", WithMaxDelay(-1), "WithMaxDelay", time.Duration(-1)},
		{"negative max Crawl-delay", WithMaxCrawlDelay(-1), "WithMaxCrawlDelay", time.Duration(-1)},
		{"no request in flight", WithMaxInFlight(0), "WithMaxInFlight", 0},
		{"zero robots.txt TTL", WithRobotsTTL(0), "WithRobotsTTL", time.Duration(0)},
		{"negative robots.txt timeout", WithRobotsTimeout(-1), "WithRobotsTimeout", time.Duration(-1)},
		{"unknown failure policy", WithRobotsFailure(FailurePolicy(7)), "WithRobotsFailure", FailurePolicy(7)},
		{"unknown robots mode", WithRobotsMode(RobotsMode(7)), "WithRobotsMode", RobotsMode(7)},
		{"no host", WithMaxHosts(0), "WithMaxHosts", 0},
		{"nil pacing key", WithPacingKey(nil), "WithPacingKey", nil},
		{"nil pacer", WithPacer(nil), "WithPacer", nil},
		{"nil robots store", WithRobotsStore(nil), "WithRobotsStore", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(WithUserAgent("Bot/1"), tt.opt, WithMaxHosts(-5))
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("Validate = %v; want a *ConfigError", err)
			}
			if ce.Option != tt.option || ce.Value != tt.value {
				t.Errorf("Validate = %#v; want Option %q, Value %v: the first invalid option", ce, tt.option, tt.value)
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
		{&ConfigError{Option: "WithPacing", Field: "BaseDelay", Value: -5 * time.Second, Reason: "must not be negative (None turns it off)"},
			"polite: WithPacing: BaseDelay -5s: must not be negative (None turns it off)"},
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
