package polite

import (
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"
)

// TestRobotsConditionalRefresh checks that an expired robots.txt is
// revalidated with its validators, that a 304 keeps the parsed rules, and
// that Cache-Control max-age shortens the lifetime but never stretches it.
func TestRobotsConditionalRefresh(t *testing.T) {
	tests := []struct {
		name      string
		maxAge    string        // Cache-Control of the 200
		wantAfter time.Duration // when the second fetch comes
	}{
		{"max-age shorter than the TTL", "max-age=600", 10 * time.Minute},
		{"max-age longer than the TTL", "public, max-age=172800", time.Hour},
		{"max-age 0 floored at a minute", "max-age=0", time.Minute},
		{"no max-age", "", time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var conditional []http.Header
				base := &fakeBase{fn: func(r *http.Request) (*http.Response, error) {
					if r.URL.Path != "/robots.txt" {
						return respond(r, 200, "ok"), nil
					}
					if r.Header.Get("If-None-Match") == `"v1"` {
						conditional = append(conditional, r.Header.Clone())
						return respond(r, 304, ""), nil
					}
					hdr := []string{"ETag", `"v1"`, "Last-Modified", "Mon, 04 May 2026 07:00:00 GMT"}
					if tt.maxAge != "" {
						hdr = append(hdr, "Cache-Control", tt.maxAge)
					}
					return respond(r, 200, "User-agent: *\nDisallow: /private\n", hdr...), nil
				}}
				tr := New(base, opts(WithRobotsTTL(time.Hour))...)
				t0 := time.Now()
				resp, err := get(tr, "http://h/a", "")
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				first := tr.robots.peek(originKey{"http", "h", "80"})

				time.Sleep(tt.wantAfter - time.Second)
				get(tr, "http://h/private", "")
				if n := base.count("/robots.txt"); n != 1 {
					t.Fatalf("%d robots.txt fetches before the lifetime ended; want 1", n)
				}
				time.Sleep(2 * time.Second)
				_, err = get(tr, "http://h/private", "")
				if !errorsIsBlocked(err) {
					t.Errorf("after the 304: %v; want the kept rules to refuse /private", err)
				}
				hits := base.hitList()
				var fetches []time.Duration
				for _, h := range hits {
					if h.url == "http://h/robots.txt" {
						fetches = append(fetches, h.at.Sub(t0))
					}
				}
				if len(fetches) != 2 || fetches[1] < tt.wantAfter || fetches[1] > tt.wantAfter+time.Second {
					t.Errorf("robots.txt fetched at %v; want twice, the second at +%v", fetches, tt.wantAfter)
				}
				if len(conditional) != 1 || conditional[0].Get("If-Modified-Since") != "Mon, 04 May 2026 07:00:00 GMT" {
					t.Errorf("conditional requests %v; want one with If-None-Match and If-Modified-Since", conditional)
				}
				second := tr.robots.peek(originKey{"http", "h", "80"})
				if second == nil || second.file != first.file || second.status != 304 {
					t.Errorf("after the 304: %+v; want the same parsed file, status 304", second)
				}
			})
		})
	}
}

func errorsIsBlocked(err error) bool { return errors.Is(err, ErrRobotsBlocked) }
