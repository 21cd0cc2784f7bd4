package polite

import (
	"log/slog"
	"net/http"
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
			ev.Time = time.Time{}
			mu.Lock()
			got = append(got, ev)
			mu.Unlock()
		}
		base := site("User-agent: *\nDisallow: /private\nnonsense\n")
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
		want := []Event{
			{Kind: EventRobotsFetched, Key: "h", URL: "http://h/robots.txt", Status: 200, Rules: 1, Skipped: 1},
			{Kind: EventSent, Key: "h", URL: "http://h/a", Duration: time.Second},
			{Kind: EventRefused, Key: "h", URL: "http://h/private", Rule: "Disallow: /private"},
			{Kind: EventSent, Key: "h", URL: "http://h/b", Duration: time.Second},
			{Kind: EventWouldRefuse, Key: "h", URL: "http://h/private", Rule: "Disallow: /private"},
			{Kind: EventSent, Key: "h", URL: "http://h/private", Duration: time.Second},
		}
		mu.Lock()
		defer mu.Unlock()
		if !slices.Equal(got, want) {
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
						ev.Time = time.Time{}
						mu.Lock()
						got = append(got, ev)
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
				// The first page waits the pace after the robots.txt fetch.
				want := []Event{
					{Kind: EventSent, Key: "h", URL: "http://h/a", Duration: tt.wait},
					{Kind: EventSent, Key: "h", URL: "http://h/b", Duration: tt.wait},
					{Kind: EventSent, Key: "h", URL: "http://h/c", Duration: tt.wait},
				}
				if !slices.Equal(got, want) {
					t.Errorf("events\n%+v\nwant\n%+v", got, want)
				}
				if !strings.Contains(logged.String(), tt.wantLog) {
					t.Errorf("log lacks %q; got:\n%s", tt.wantLog, logged.String())
				}
			})
		})
	}
}

func TestEventKindString(t *testing.T) {
	for k, want := range map[EventKind]string{EventBackoff: "backing off", EventSent: "sent", EventHostEvicted: "host evicted", EventUnreadableField: "unreadable field", 0: "EventKind(0)", 99: "EventKind(99)"} {
		if got := k.String(); got != want {
			t.Errorf("EventKind(%d).String() = %q; want %q", int(k), got, want)
		}
	}
}
