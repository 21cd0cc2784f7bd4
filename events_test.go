package polite

import (
	"net/http"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
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
		tr := New(base, WithJitter(0), WithEvents(hook), WithWaitThreshold(500*time.Millisecond))
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
			{Kind: EventRobotsFetched, Host: "h", URL: "http://h/robots.txt", Status: 200, Rules: 1, Skipped: 1},
			{Kind: EventWaited, Host: "h", URL: "http://h/a", Duration: time.Second},
			{Kind: EventRefused, Host: "h", URL: "http://h/private", Rule: "Disallow: /private"},
			{Kind: EventWaited, Host: "h", URL: "http://h/b", Duration: time.Second},
			{Kind: EventWouldRefuse, Host: "h", URL: "http://h/private", Rule: "Disallow: /private"},
			{Kind: EventWaited, Host: "h", URL: "http://h/private", Duration: time.Second},
		}
		mu.Lock()
		defer mu.Unlock()
		if !slices.Equal(got, want) {
			t.Errorf("events\n%+v\nwant\n%+v", got, want)
		}
	})
}

func TestEventKindString(t *testing.T) {
	for k, want := range map[EventKind]string{EventBackoff: "backing off", EventHostEvicted: "host evicted", 0: "EventKind(0)", 99: "EventKind(99)"} {
		if got := k.String(); got != want {
			t.Errorf("EventKind(%d).String() = %q; want %q", int(k), got, want)
		}
	}
}
