package polite

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/polite-go/polite/pace"
)

// TestRobotsModes checks what each mode does with a URL robots.txt
// disallows, chosen for the transport, per host and per request, and how
// later options override earlier ones host by host.
func TestRobotsModes(t *testing.T) {
	apiOff := WithRobotsMode(RobotsOff, "api.example")
	tests := []struct {
		name        string
		opts        []Option
		url         string
		ctxMode     *RobotsMode
		wantBlocked bool
		wantRobots  int    // robots.txt fetches
		wantWould   uint64 // HostStats.WouldRefuse
		wantLog     bool   // "would refuse" logged
	}{
		{"enforce", nil, "http://h/private", nil, true, 1, 0, false},
		{"report", []Option{WithRobotsMode(RobotsReport)}, "http://h/private", nil, false, 1, 1, true},
		{"report, allowed URL", []Option{WithRobotsMode(RobotsReport)}, "http://h/public", nil, false, 1, 0, false},
		{"off", []Option{WithRobotsMode(RobotsOff)}, "http://h/private", nil, false, 0, 0, false},
		{"per host, off", []Option{apiOff}, "http://api.example/private", nil, false, 0, 0, false},
		{"per host, the others enforce", []Option{apiOff}, "http://www.example/private", nil, true, 1, 0, false},
		{"per host, not its subdomains", []Option{apiOff}, "http://v2.api.example/private", nil, true, 1, 0, false},
		{"per host, named as a URL names it", []Option{WithRobotsMode(RobotsOff, "API.Example.")}, "http://api.example:8080/private", nil, false, 0, 0, false},
		{"per request overrides the transport", []Option{apiOff}, "http://www.example/private", ptr(RobotsOff), false, 0, 0, false},
		{"per request enforces on an off transport", []Option{WithRobotsMode(RobotsOff)}, "http://h/private", ptr(RobotsEnforce), true, 1, 0, false},
		{"a later mode for all keeps a host's", []Option{apiOff, WithRobotsMode(RobotsReport)}, "http://api.example/private", nil, false, 0, 0, false},
		{"a later mode for all sets the others'", []Option{apiOff, WithRobotsMode(RobotsReport)}, "http://www.example/private", nil, false, 1, 1, true},
		{"a host's later mode replaces its earlier", []Option{apiOff, WithRobotsMode(RobotsEnforce, "api.example")}, "http://api.example/private", nil, true, 1, 0, false},
		{"APIDefaults keeps a host's mode", []Option{WithRobotsMode(RobotsEnforce, "www.example"), APIDefaults()}, "http://www.example/private", nil, true, 1, 0, false},
		{"APIDefaults turns the others off", []Option{WithRobotsMode(RobotsEnforce, "www.example"), APIDefaults()}, "http://h/private", nil, false, 0, 0, false},
		{"per request overrides a later mode", []Option{apiOff, WithRobotsMode(RobotsOff)}, "http://h/private", ptr(RobotsEnforce), true, 1, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var logged strings.Builder
				var mu sync.Mutex
				logger := slog.New(slog.NewTextHandler(lockedWriter{&mu, &logged}, nil))
				base := site("User-agent: *\nDisallow: /private\n")
				tr := New(base, opts(append([]Option{WithLogger(logger)}, tt.opts...)...)...)
				ctx := context.Background()
				if tt.ctxMode != nil {
					ctx = ContextWithRobotsMode(ctx, *tt.ctxMode)
				}
				req, _ := http.NewRequestWithContext(ctx, "GET", tt.url, nil)
				resp, err := tr.RoundTrip(req)
				if blocked := errors.Is(err, ErrRobotsBlocked); blocked != tt.wantBlocked {
					t.Errorf("RoundTrip error %v; want blocked %v", err, tt.wantBlocked)
				}
				if err == nil {
					resp.Body.Close()
				}
				if n := base.count("/robots.txt"); n != tt.wantRobots {
					t.Errorf("%d robots.txt fetches; want %d", n, tt.wantRobots)
				}
				var would uint64
				for _, s := range statsOf(t, tr) {
					would += s.WouldRefuse
				}
				if would != tt.wantWould {
					t.Errorf("WouldRefuse = %d; want %d", would, tt.wantWould)
				}
				mu.Lock()
				gotLog := strings.Contains(logged.String(), "would refuse")
				mu.Unlock()
				if gotLog != tt.wantLog {
					t.Errorf("logged a refusal it let through: %v; want %v\n%s", gotLog, tt.wantLog, logged.String())
				}
				d, err := tr.Check(req)
				if err != nil {
					t.Fatal(err)
				}
				if wantAllowed := !tt.wantBlocked && tt.wantWould == 0; d.Allowed != wantAllowed {
					t.Errorf("Check: Allowed %v (mode %v); want %v", d.Allowed, d.Mode, wantAllowed)
				}
			})
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestBackoffShape checks that BackoffBase and MaxBackoff shape the pause
// after a signal, and that a Retry-After then is the wait.
func TestBackoffShape(t *testing.T) {
	tests := []struct {
		name       string
		opts       []Option
		retryAfter string
		want       time.Duration // from the 429 to the next start
	}{
		{"crawler default, Retry-After 1", nil, "1", 5 * time.Second},
		{"API defaults, Retry-After 1", []Option{APIDefaults()}, "1", time.Second},
		{"no base, Retry-After 1", []Option{WithPacing(pace.Policy{BackoffBase: pace.None, MaxBackoff: time.Minute})}, "1", time.Second},
		{"no base, no Retry-After", []Option{WithPacing(pace.Policy{BackoffBase: pace.None, MaxBackoff: time.Minute})}, "", 0},
		{"base above the cap", []Option{WithPacing(pace.Policy{BackoffBase: time.Minute, MaxBackoff: 2 * time.Second})}, "", 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				first := true
				base := &fakeBase{fn: func(r *http.Request) (*http.Response, error) {
					switch {
					case r.URL.Path == "/robots.txt":
						return respond(r, 404, ""), nil
					case first:
						first = false
						if tt.retryAfter == "" {
							return respond(r, 429, ""), nil
						}
						return respond(r, 429, "", "Retry-After", tt.retryAfter), nil
					}
					return respond(r, 200, "ok"), nil
				}}
				tr := New(base, append([]Option{WithPacing(pace.Policy{BaseDelay: pace.None, Jitter: pace.None, LatencyFactor: pace.None})}, tt.opts...)...)
				resp, err := get(tr, "http://h/a", "")
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				answered := time.Now()
				resp, err = get(tr, "http://h/b", "")
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if got := time.Since(answered); got != tt.want {
					t.Errorf("next start %v after the 429; want %v", got, tt.want)
				}
			})
		})
	}
}

// TestRateLimitFields checks that each style of rate-limit fields slows a
// host before it answers 429, and that fields that lie or are malformed
// never pause it past the cap.
func TestRateLimitFields(t *testing.T) {
	const date = "Mon, 04 May 2026 07:28:00 GMT"
	tests := []struct {
		name       string
		headers    []string
		want       time.Duration // between the starts of the second and third requests
		unreadable string        // the EventUnreadableField's "Field: Value", or ""
	}{
		{"none", nil, 0, ""},
		{"RateLimit, none left", []string{"RateLimit", `"default";r=0;t=30`}, 30 * time.Second, ""},
		{"RateLimit, low quota spread", []string{"RateLimit", `"default";r=2;t=9`, "RateLimit-Policy", `"default";q=100;w=60`}, 3 * time.Second, ""}, // the last of the two 3s before the reset
		{"RateLimit, ample quota", []string{"RateLimit", `"default";r=80;t=10`, "RateLimit-Policy", `"default";q=100;w=60`}, 0, ""},
		{"RateLimit, tightest item binds", []string{"RateLimit", `"day";r=500;t=3600, "burst";r=0;t=4`}, 4 * time.Second, ""},
		{"RateLimit dictionary, none left", []string{"RateLimit", "limit=10, remaining=0, reset=2"}, 2 * time.Second, ""},
		{"RateLimit dictionary, low quota spread", []string{"RateLimit", "limit=100, remaining=2, reset=9", "RateLimit-Policy", "100;w=10"}, 3 * time.Second, ""},
		{"RateLimit dictionary, ample quota", []string{"RateLimit", "limit=100, remaining=80, reset=10"}, 0, ""},
		{"RateLimit dictionary, parameters ignored", []string{"RateLimit", "limit=10;w=1, remaining=0;x=1, reset=3"}, 3 * time.Second, ""},
		{"RateLimit dictionary without remaining", []string{"RateLimit", "limit=100, reset=10"}, 0, ""},
		{"RateLimit dictionary, malformed reset", []string{"RateLimit", "limit=10, remaining=0, reset=soon"}, 0, "RateLimit: limit=10, remaining=0, reset=soon"},
		{"RateLimit dictionary, malformed limit", []string{"RateLimit", "limit=many, remaining=0, reset=6"}, 6 * time.Second, "RateLimit: limit=many, remaining=0, reset=6"},
		{"RateLimit-Remaining 0", []string{"RateLimit-Remaining", "0", "RateLimit-Reset", "20", "RateLimit-Limit", "100"}, 20 * time.Second, ""},
		{"RateLimit-Limit malformed", []string{"RateLimit-Remaining", "0", "RateLimit-Reset", "20", "RateLimit-Limit", "lots"}, 20 * time.Second, "RateLimit-Limit: lots"},
		{"X-RateLimit seconds", []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "7"}, 7 * time.Second, ""},
		{"X-RateLimit epoch", []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "1777879695", "Date", date}, 15 * time.Second, ""}, // Date + 15s,
		{"X-RateLimit epoch in the past", []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "1777879600", "Date", date}, 0, ""},    // Date - 80s,
		{"reset that lies", []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "315360000"}, time.Hour, ""},
		{"malformed remaining", []string{"X-RateLimit-Remaining", "none", "X-RateLimit-Reset", "30"}, 0, "X-RateLimit-Remaining: none"},
		{"negative remaining", []string{"X-RateLimit-Remaining", "-1", "X-RateLimit-Reset", "30"}, 0, "X-RateLimit-Remaining: -1"},
		{"malformed reset", []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "soon"}, 0, "X-RateLimit-Reset: soon"},
		{"missing reset", []string{"X-RateLimit-Remaining", "0"}, 0, ""},
		{"RateLimit without t", []string{"RateLimit", `"default";r=0`}, 0, `RateLimit: "default";r=0`},
		{"RateLimit with a partition key", []string{"RateLimit", `"default";r=0;t=3;pk=:dXNlcjE=:`}, 3 * time.Second, ""},
		{"X-RateLimit of a named resource", []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "9", "X-RateLimit-Resource", "search"}, 9 * time.Second, ""},
		// OpenAI's: a quota of requests and one of tokens, resets as durations.
		{"OpenAI requests, none left", []string{"X-RateLimit-Remaining-Requests", "0", "X-RateLimit-Reset-Requests", "3s", "X-RateLimit-Limit-Requests", "60"}, 3 * time.Second, ""},
		{"OpenAI requests, minutes", []string{"X-RateLimit-Remaining-Requests", "0", "X-RateLimit-Reset-Requests", "6m0s"}, 6 * time.Minute, ""},
		{"OpenAI tokens, none left", []string{"X-RateLimit-Remaining-Requests", "59", "X-RateLimit-Reset-Requests", "1s", "X-RateLimit-Limit-Requests", "60",
			"X-RateLimit-Remaining-Tokens", "0", "X-RateLimit-Reset-Tokens", "20ms", "X-RateLimit-Limit-Tokens", "150000"}, 20 * time.Millisecond, ""},
		{"OpenAI both exhausted, the later reset", []string{"X-RateLimit-Remaining-Requests", "0", "X-RateLimit-Reset-Requests", "1s",
			"X-RateLimit-Remaining-Tokens", "0", "X-RateLimit-Reset-Tokens", "2.5s"}, 2500 * time.Millisecond, ""},
		{"OpenAI tokens tighter, spread", []string{"X-RateLimit-Remaining-Requests", "59", "X-RateLimit-Reset-Requests", "1s", "X-RateLimit-Limit-Requests", "60",
			"X-RateLimit-Remaining-Tokens", "10000", "X-RateLimit-Reset-Tokens", "6s", "X-RateLimit-Limit-Tokens", "150000"}, 1200 * time.Millisecond, ""}, // 4 requests' worth over 6s, in 5 gaps
		{"OpenAI requests tighter, spread", []string{"X-RateLimit-Remaining-Requests", "2", "X-RateLimit-Reset-Requests", "10s", "X-RateLimit-Limit-Requests", "60",
			"X-RateLimit-Remaining-Tokens", "149000", "X-RateLimit-Reset-Tokens", "1s", "X-RateLimit-Limit-Tokens", "150000"}, 10 * time.Second / 3, ""},
		{"OpenAI ample", []string{"X-RateLimit-Remaining-Requests", "59", "X-RateLimit-Reset-Requests", "1s", "X-RateLimit-Limit-Requests", "60",
			"X-RateLimit-Remaining-Tokens", "149000", "X-RateLimit-Reset-Tokens", "6ms", "X-RateLimit-Limit-Tokens", "150000"}, 0, ""},
		{"OpenAI reset in seconds", []string{"X-RateLimit-Remaining-Requests", "0", "X-RateLimit-Reset-Requests", "4"}, 4 * time.Second, ""},
		{"OpenAI malformed reset", []string{"X-RateLimit-Remaining-Requests", "0", "X-RateLimit-Reset-Requests", "soon"}, 0, "X-RateLimit-Reset-Requests: soon"},
		{"OpenAI negative reset", []string{"X-RateLimit-Remaining-Requests", "5", "X-RateLimit-Reset-Requests", "1s", "X-RateLimit-Remaining-Tokens", "0", "X-RateLimit-Reset-Tokens", "-1s"}, 0, "X-RateLimit-Reset-Tokens: -1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := 0
				base := &fakeBase{fn: func(r *http.Request) (*http.Response, error) {
					n++
					if n == 1 {
						return respond(r, 200, "ok", tt.headers...), nil
					}
					return respond(r, 200, "ok"), nil
				}}
				var unreadable []string
				tr := New(base, APIDefaults(), WithEvents(func(ev Event) {
					if ev.Kind == EventUnreadableField {
						unreadable = append(unreadable, ev.Field+": "+ev.Value)
					}
				}))
				var starts []time.Time
				for _, p := range []string{"/a", "/b"} {
					resp, err := get(tr, "http://api.example"+p, "")
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					starts = append(starts, base.hitList()[len(base.hitList())-1].at)
				}
				if got := starts[1].Sub(starts[0]); got != tt.want {
					t.Errorf("second request %v after the first; want %v", got, tt.want)
				}
				var want []string
				if tt.unreadable != "" {
					want = []string{tt.unreadable}
				}
				if !slices.Equal(unreadable, want) {
					t.Errorf("unreadable fields reported: %q; want %q", unreadable, want)
				}
			})
		})
	}
}

// TestUnreadableFieldOnce checks that an unreadable rate-limit field is
// said once per pacing key and field, with its value cut short, that the
// record of what was said is bounded, and that the logger logs it at Warn.
func TestUnreadableFieldOnce(t *testing.T) {
	long := strings.Repeat("é", 80) // 160 bytes
	tests := []struct {
		name     string
		requests []string // "host field value", one per request
		want     []string // "host field value" of the events
	}{
		{
			name:     "once per key and field",
			requests: []string{"a X-RateLimit-Reset soon", "a X-RateLimit-Reset later", "b X-RateLimit-Reset soon", "a X-RateLimit-Remaining x", "a X-RateLimit-Reset soon"},
			want:     []string{"a X-RateLimit-Reset soon", "b X-RateLimit-Reset soon", "a X-RateLimit-Remaining x"},
		},
		{
			name:     "value cut short",
			requests: []string{"a X-RateLimit-Reset " + long},
			want:     []string{"a X-RateLimit-Reset " + long[:100] + "…"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var got []string
				tr := New(fieldsBase(), APIDefaults(), WithEvents(func(ev Event) {
					if ev.Kind == EventUnreadableField {
						got = append(got, ev.Key+" "+ev.Field+" "+ev.Value)
					}
				}))
				for _, r := range tt.requests {
					fieldsGet(t, tr, r)
				}
				if !slices.Equal(got, tt.want) {
					t.Errorf("events %q; want %q", got, tt.want)
				}
			})
		})
	}

	t.Run("bounded", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			n := 0
			tr := New(fieldsBase(), APIDefaults(), WithEvents(func(ev Event) {
				if ev.Kind == EventUnreadableField {
					n++
				}
			}))
			for i := range maxFieldNotes {
				fieldsGet(t, tr, fmt.Sprintf("h%d X-RateLimit-Reset soon", i))
			}
			fieldsGet(t, tr, "h0 X-RateLimit-Reset soon") // remembered
			if n != maxFieldNotes {
				t.Errorf("%d events for %d keys; want one each", n, maxFieldNotes)
			}
			fieldsGet(t, tr, "another X-RateLimit-Reset soon") // the record starts afresh
			fieldsGet(t, tr, "h0 X-RateLimit-Reset soon")
			if n != maxFieldNotes+2 {
				t.Errorf("%d events; want %d, the record having started afresh", n, maxFieldNotes+2)
			}
			if len(tr.fieldNotes.seen) > maxFieldNotes {
				t.Errorf("%d notes kept; want at most %d", len(tr.fieldNotes.seen), maxFieldNotes)
			}
		})
	})

	t.Run("logged at Warn", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var logged strings.Builder
			logger := slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{
				ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
					if a.Key == slog.TimeKey {
						return slog.Attr{}
					}
					return a
				},
			}))
			tr := New(fieldsBase(), APIDefaults(), WithLogger(logger))
			fieldsGet(t, tr, "a RateLimit limit=1,remaining=0,reset=x")
			want := `level=WARN msg="polite: unreadable field" key=a url="http://a/?f=RateLimit&v=limit%3D1%2Cremaining%3D0%2Creset%3Dx" field=RateLimit value="limit=1,remaining=0,reset=x"` + "\n"
			if logged.String() != want {
				t.Errorf("logged %q; want %q", logged.String(), want)
			}
		})
	})
}

// fieldsBase answers every request to http://HOST/?f=FIELD&v=VALUE with
// a 200 that has FIELD: VALUE and, unless FIELD is that one,
// X-RateLimit-Remaining: 9.
func fieldsBase() *fakeBase {
	return &fakeBase{fn: func(r *http.Request) (*http.Response, error) {
		q := r.URL.Query()
		resp := respond(r, 200, "ok", "X-RateLimit-Remaining", "9")
		resp.Header.Set(q.Get("f"), q.Get("v"))
		return resp, nil
	}}
}

// fieldsGet sends a request of fieldsBase's for "HOST FIELD VALUE".
func fieldsGet(t *testing.T, tr *PoliteTransport, hostFieldValue string) {
	t.Helper()
	f := strings.SplitN(hostFieldValue, " ", 3)
	u := "http://" + f[0] + "/?" + url.Values{"f": {f[1]}, "v": {f[2]}}.Encode()
	resp, err := get(tr, u, "")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

// TestLatencyPacingOff checks that a LatencyFactor of pace.None lets a slow
// host be asked again as soon as it has answered.
func TestLatencyPacingOff(t *testing.T) {
	for _, tt := range []struct {
		factor float64
		want   time.Duration
	}{{pace.None, 2 * time.Second}, {2, 4 * time.Second}} { // the second start: the first answer's end, or twice its latency
		synctest.Test(t, func(t *testing.T) {
			base := &fakeBase{fn: func(r *http.Request) (*http.Response, error) {
				time.Sleep(2 * time.Second)
				return respond(r, 200, "ok"), nil
			}}
			tr := New(base, WithRobotsMode(RobotsOff), WithPacing(pace.Policy{BaseDelay: pace.None, Jitter: pace.None, LatencyFactor: tt.factor}))
			t0 := time.Now()
			for range 2 {
				resp, err := get(tr, "http://h/", "")
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
			}
			hits := base.hitList()
			if got := hits[1].at.Sub(t0); got != tt.want {
				t.Errorf("latency factor %v: second start at +%v; want +%v", tt.factor, got, tt.want)
			}
		})
	}
}

// TestRobotsTransport checks that robots.txt goes through the robots
// transport, without the credentials the base adds to pages.
func TestRobotsTransport(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		plain := site("User-agent: *\nDisallow: /private\n")
		withAuth := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			r = r.Clone(r.Context())
			r.Header.Set("Authorization", "Bearer secret")
			return plain.RoundTrip(r)
		})
		tr := New(withAuth, opts(WithRobotsTransport(plain))...)
		resp, err := get(tr, "http://h/page", "")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		for _, h := range plain.hitList() {
			robots := strings.HasSuffix(h.url, "/robots.txt")
			if auth := h.hdrs.Get("Authorization") != ""; auth == robots {
				t.Errorf("%s carried Authorization %v; want it on pages only", h.url, auth)
			}
		}
		if _, err := get(tr, "http://h/private", ""); !errors.Is(err, ErrRobotsBlocked) {
			t.Errorf("GET /private = %v; want the robots.txt fetched through the robots transport to bind", err)
		}
	})
}

// TestPacingKeys checks that the pacing key groups URLs as chosen.
func TestPacingKeys(t *testing.T) {
	byDomain := func(u *url.URL) string {
		labels := strings.Split(u.Hostname(), ".")
		return strings.Join(labels[max(len(labels)-2, 0):], ".")
	}
	tests := []struct {
		name string
		key  func(*url.URL) string
		urls []string
		want []time.Duration // start of each page, robots.txt off
	}{
		{"host, default", nil, []string{"http://h:1/", "http://h:2/", "https://h/"}, []time.Duration{0, time.Second, 2 * time.Second}},
		{"origin", PacingKeyOrigin, []string{"http://h:1/", "http://h:2/", "http://h:1/x"}, []time.Duration{0, 0, time.Second}},
		{"registrable domain", byDomain, []string{"http://a.example.com/", "http://b.example.com/", "http://c.example.org/"}, []time.Duration{0, time.Second, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := site("")
				o := []Option{WithRobotsMode(RobotsOff), WithPacing(pace.Policy{Jitter: pace.None, LatencyFactor: pace.None})}
				if tt.key != nil {
					o = append(o, WithPacingKey(tt.key))
				}
				tr := New(base, o...)
				t0 := time.Now()
				var wg sync.WaitGroup
				for _, u := range tt.urls {
					wg.Go(func() {
						if resp, err := get(tr, u, ""); err == nil {
							resp.Body.Close()
						}
					})
					synctest.Wait() // in order
				}
				wg.Wait()
				started := map[string]time.Duration{}
				for _, h := range base.hitList() {
					started[h.url] = h.at.Sub(t0)
				}
				for i, u := range tt.urls {
					if got, ok := started[u]; !ok || got != tt.want[i] {
						t.Errorf("%s started at +%v (sent: %v); want +%v", u, got, ok, tt.want[i])
					}
				}
			})
		})
	}
}

// TestQuotaPartitionNamed checks that a response's quota carries the
// partition the server named for it: GitHub's X-RateLimit-Resource, or
// the pk parameter of the RateLimit item that binds, or of its policy.
func TestQuotaPartitionNamed(t *testing.T) {
	tests := []struct {
		name    string
		headers []string
		want    string
	}{
		{"none", []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "9"}, ""},
		{"X-RateLimit-Resource", []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "9", "X-RateLimit-Resource", "search"}, "search"},
		{"cut long", []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "9", "X-RateLimit-Resource", strings.Repeat("r", 100)}, strings.Repeat("r", 64)},
		{"pk of the binding item", []string{"RateLimit", `"a";r=90;t=10;pk=:QQ==:, "b";r=1;t=10;pk=:Qg==:`}, ":Qg==:"},
		{"pk of its policy", []string{"RateLimit", `"b";r=1;t=10`, "RateLimit-Policy", `"b";q=100;w=10;pk=:Qg==:`}, ":Qg==:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for i := 0; i < len(tt.headers); i += 2 {
				h.Set(tt.headers[i], tt.headers[i+1])
			}
			if q := parseQuota(h); !q.Known || q.Partition != tt.want {
				t.Errorf("parseQuota = %+v; want known, partition %q", q, tt.want)
			}
		})
	}
}
