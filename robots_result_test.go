package polite

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
)

// TestRobotsURLOneForm checks that a robots.txt URL is written one way
// wherever it appears: as fetched, the default port left out.
func TestRobotsURLOneForm(t *testing.T) {
	tests := []struct {
		url, want string
	}{
		{"http://h/private", "http://h/robots.txt"},
		{"http://H:80/private", "http://h/robots.txt"},
		{"https://h/private", "https://h/robots.txt"},
		{"https://h:8443/private", "https://h:8443/robots.txt"},
		{"http://[::1]:8080/private", "http://[::1]:8080/robots.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				var urls []string // what each place says
				note := func(where, url string) {
					mu.Lock()
					defer mu.Unlock()
					if url != tt.want {
						t.Errorf("%s: robots.txt URL %q; want %q", where, url, tt.want)
					}
					urls = append(urls, where)
				}
				memory := NewMemoryRobotsStore(10)
				store := storeFunc(func(ctx context.Context, origin string, fetch func(context.Context, *RobotsFetch) *RobotsFetch) (*RobotsFetch, error) {
					return memory.Load(ctx, origin, func(ctx context.Context, prev *RobotsFetch) *RobotsFetch {
						f := fetch(ctx, prev)
						note("RobotsFetch", f.URL)
						return f
					})
				})
				events := func(ev Event) {
					if ev.Kind == EventRobotsFetched {
						note("Event", ev.URL)
					}
				}
				tr := New(site("User-agent: *\nDisallow: /private\n"), opts(WithRobotsStore(store), WithEvents(events))...)
				_, err := get(tr, tt.url, "")
				var be *RobotsBlockedError
				if !errors.As(err, &be) {
					t.Fatalf("err = %v; want a *RobotsBlockedError", err)
				}
				note("RobotsBlockedError", be.RobotsURL)
				req, _ := http.NewRequest("GET", tt.url, nil)
				d, err := tr.Check(req)
				if err != nil {
					t.Fatal(err)
				}
				note("Decision", d.Robots.URL)
				for _, s := range statsOf(t, tr) {
					for _, r := range s.Robots {
						note("RobotsStats", r.URL)
					}
				}
				if len(urls) != 5 {
					t.Errorf("robots.txt URL seen in %v; want RobotsFetch, Event, RobotsBlockedError, Decision and RobotsStats", urls)
				}
			})
		})
	}
}
