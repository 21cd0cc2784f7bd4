package politeredis

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/pace"
	"github.com/redis/go-redis/v9"
)

// TestOptionKinds checks which constructor each option serves: a Pacer's
// option given to NewRobotsStore, or a robots store's to NewPacer, does
// not compile.
func TestOptionKinds(t *testing.T) {
	tests := []struct {
		name          string
		opt           any
		pacer, robots bool
	}{
		{"WithKeyPrefix", WithKeyPrefix("p"), true, true},
		{"WithTimeout", WithTimeout(time.Second), true, true},
		{"WithLogger", WithLogger(nil), true, true},
		{"FailWhenUnreachable", FailWhenUnreachable(), true, true},
		{"WithPollInterval", WithPollInterval(time.Second), true, true},
		{"WithLeaseDuration", WithLeaseDuration(time.Second), true, false},
		{"WithClock", WithClock(time.Now), true, false},
		{"WithFetchClaim", WithFetchClaim(time.Second), false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, pacer := tt.opt.(PacerOption)
			_, robots := tt.opt.(RobotsOption)
			_, both := tt.opt.(Option)
			if pacer != tt.pacer || robots != tt.robots || both != (tt.pacer && tt.robots) {
				t.Errorf("a PacerOption %v, a RobotsOption %v, an Option %v; want %v, %v, %v",
					pacer, robots, both, tt.pacer, tt.robots, tt.pacer && tt.robots)
			}
		})
	}
}

// TestInvalidOptions checks that an invalid value is refused when the
// constructor applies it, with a *polite.ConfigError naming the option,
// and not when the option is made.
func TestInvalidOptions(t *testing.T) {
	c := redis.NewClient(clientOptions("/nonexistent/redis.sock"))
	defer c.Close()
	// Made here, before any constructor runs: making them does not panic.
	tests := []struct {
		name   string
		pacer  PacerOption // given to NewPacer, if not nil
		robots RobotsOption
		option string
	}{
		{"pacer timeout", WithTimeout(0), nil, "politeredis.WithTimeout"},
		{"pacer poll interval", WithPollInterval(-time.Second), nil, "politeredis.WithPollInterval"},
		{"lease duration", WithLeaseDuration(0), nil, "politeredis.WithLeaseDuration"},
		{"robots timeout", nil, WithTimeout(-1), "politeredis.WithTimeout"},
		{"fetch claim", nil, WithFetchClaim(0), "politeredis.WithFetchClaim"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				err, _ := recover().(error)
				var ce *polite.ConfigError
				if !errors.As(err, &ce) || ce.Option != tt.option || !errors.Is(err, polite.ErrInvalidConfig) {
					t.Errorf("panicked with %v; want a *polite.ConfigError of %s", err, tt.option)
				}
			}()
			if tt.pacer != nil {
				NewPacer(c, WithKeyPrefix("p"), tt.pacer)
			} else {
				NewRobotsStore(c, WithKeyPrefix("p"), tt.robots)
			}
		})
	}
}

// TestLoggerSilentByDefault checks that without WithLogger, or with a nil
// logger, an outage is logged nowhere, slog's default logger included, as
// in package polite; a logger given hears of it.
func TestLoggerSilentByDefault(t *testing.T) {
	var def syncBuffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&def, nil)))
	defer slog.SetDefault(prev)

	c := redis.NewClient(clientOptions("/nonexistent/redis.sock"))
	defer c.Close()
	tests := []struct {
		name    string
		logger  bool // give a logger of its own
		opts    []Option
		wantOwn int // lines the logger given hears
	}{
		{"no WithLogger", false, nil, 0},
		{"WithLogger(nil)", false, []Option{WithLogger(nil)}, 0},
		{"a logger", true, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var own syncBuffer
			opts := append([]Option{WithTimeout(100 * time.Millisecond)}, tt.opts...)
			if tt.logger {
				opts = append(opts, WithLogger(slog.New(slog.NewTextHandler(&own, nil))))
			}
			pacerOpts := make([]PacerOption, len(opts))
			robotsOpts := make([]RobotsOption, len(opts))
			for i, o := range opts {
				pacerOpts[i], robotsOpts[i] = o, o
			}
			p := NewPacer(c, pacerOpts...)(pace.Config{Policy: pace.Policy{BaseDelay: pace.None}})
			l, err := p.Acquire(context.Background(), pace.Request{Key: "a"})
			if err != nil {
				t.Fatalf("Acquire = %v; want the in-memory fallback", err)
			}
			p.Release(l, pace.Outcome{Class: pace.Success})
			s := NewRobotsStore(c, robotsOpts...)
			fetch := func(context.Context, *polite.RobotsFetch) *polite.RobotsFetch {
				return copyOf("http://a:80", time.Hour)
			}
			if _, err := s.Load(context.Background(), "http://a:80", fetch); err != nil {
				t.Fatalf("Load = %v; want the fetch in this process", err)
			}
			if got := strings.Count(own.String(), "unreachable"); got != 2*tt.wantOwn {
				t.Errorf("the logger given heard %d outages; want %d:\n%s", got, 2*tt.wantOwn, own.String())
			}
			if def.String() != "" {
				t.Errorf("slog's default logger heard:\n%s", def.String())
			}
		})
	}
}
