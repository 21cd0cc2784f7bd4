package polite

import (
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/polite-go/polite/pace"
)

// TestEvents checks the events of a transport, in order, as a hook sees
// them; the pacer's own are checked in pacer_test.go.
func TestEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var got []Event
		hook := func(ev Event) {
			if ev.Time.IsZero() {
				t.Errorf("%v without a time", ev.Kind)
			}
			if ev.Context == nil {
				t.Errorf("%v without a context", ev.Kind)
			}
			mu.Lock()
			got = append(got, plain(ev))
			mu.Unlock()
		}
		const robots = "User-agent: *\nDisallow: /private\nnonsense\n"
		base := site(robots)
		tr := New(base, WithPacing(pace.Policy{Jitter: pace.None}), WithEvents(hook))
		for _, u := range []string{"http://h/a", "http://h/private", "http://h/b"} {
			if resp, err := get(tr, u, ""); err == nil {
				resp.Body.Close()
			}
		}
		req, _ := http.NewRequestWithContext(ContextWithRobotsMode(t.Context(), RobotsReport), "GET", "http://h/private", nil)
		if resp, err := tr.RoundTrip(req); err == nil {
			resp.Body.Close()
		}
		paced := []pace.Wait{{Cause: pace.CausePace, Duration: time.Second}}
		want := []Event{
			{Kind: EventRobotsFetched, Key: "h", URL: "http://h/robots.txt", Status: 200, Rules: 1, Skipped: 1, Bytes: len(robots)},
			{Kind: EventSent, Key: "h", URL: "http://h/a", Duration: time.Second, Waits: []pace.Wait{{Cause: pace.CauseRobots}, paced[0]}},
			{Kind: EventRefused, Key: "h", URL: "http://h/private", Rule: "Disallow: /private", Group: "*"},
			{Kind: EventSent, Key: "h", URL: "http://h/b", Duration: time.Second, Waits: paced},
			{Kind: EventWouldRefuse, Key: "h", URL: "http://h/private", Rule: "Disallow: /private", Group: "*"},
			{Kind: EventSent, Key: "h", URL: "http://h/private", Duration: time.Second, Waits: paced},
		}
		mu.Lock()
		defer mu.Unlock()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("events\n%+v\nwant\n%+v", got, want)
		}
	})
}

// TestEventSentForEveryRequest checks that every request passed to the
// base makes an EventSent, whether it waited for its turn or not, and that
// the logger logs the ones that waited a second or more at Info, the
// others at Debug.
func TestEventSentForEveryRequest(t *testing.T) {
	tests := []struct {
		name    string
		opts    []Option
		wait    time.Duration // of each page after the first
		wantLog string
	}{
		{"no wait", quick, 0, `level=DEBUG msg="polite: sent" key=h url=http://h/b wait=0s`},
		{"a short wait", []Option{WithPacing(pace.Policy{BaseDelay: 999 * time.Millisecond, Jitter: pace.None})}, 999 * time.Millisecond,
			`level=DEBUG msg="polite: sent" key=h url=http://h/b wait=999ms`},
		{"a long wait", []Option{WithPacing(pace.Policy{Jitter: pace.None})}, time.Second, `level=INFO msg="polite: waited" key=h url=http://h/b wait=1s`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				var got []Event
				var logged strings.Builder
				logger := slog.New(slog.NewTextHandler(lockedWriter{&mu, &logged}, &slog.HandlerOptions{
					Level: slog.LevelDebug,
					ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
						if a.Key == slog.TimeKey {
							return slog.Attr{}
						}
						return a
					},
				}))
				hook := func(ev Event) {
					if ev.Kind == EventSent {
						mu.Lock()
						got = append(got, plain(ev))
						mu.Unlock()
					}
				}
				tr := New(site(""), append(tt.opts, WithEvents(hook), WithLogger(logger))...)
				for _, u := range []string{"http://h/a", "http://h/b", "http://h/c"} {
					resp, err := get(tr, u, "")
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
				}
				mu.Lock()
				defer mu.Unlock()
				// The first page waits for the robots.txt fetch, then the
				// pace after it.
				var paced []pace.Wait
				if tt.wait > 0 {
					paced = []pace.Wait{{Cause: pace.CausePace, Duration: tt.wait}}
				}
				want := []Event{
					{Kind: EventSent, Key: "h", URL: "http://h/a", Duration: tt.wait, Waits: append([]pace.Wait{{Cause: pace.CauseRobots}}, paced...)},
					{Kind: EventSent, Key: "h", URL: "http://h/b", Duration: tt.wait, Waits: paced},
					{Kind: EventSent, Key: "h", URL: "http://h/c", Duration: tt.wait, Waits: paced},
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("events\n%+v\nwant\n%+v", got, want)
				}
				if !strings.Contains(logged.String(), tt.wantLog) {
					t.Errorf("log lacks %q; got:\n%s", tt.wantLog, logged.String())
				}
			})
		})
	}
}

// plain returns ev without what tests cannot foresee: its Time, its
// Context and the starts of its Waits.
func plain(ev Event) Event {
	ev.Time, ev.Context = time.Time{}, nil
	ev.Waits = slices.Clone(ev.Waits)
	for i := range ev.Waits {
		ev.Waits[i].Start = time.Time{}
	}
	return ev
}

func TestEventKindString(t *testing.T) {
	for k, want := range map[EventKind]string{EventBackoff: "backing off", EventSent: "sent", EventHostEvicted: "host evicted", EventUnreadableField: "unreadable field", 0: "EventKind(0)", 99: "EventKind(99)"} {
		if got := k.String(); got != want {
			t.Errorf("EventKind(%d).String() = %q; want %q", int(k), got, want)
		}
	}
}
