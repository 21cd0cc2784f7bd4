package polite

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestRobotsFetchHostHeader checks that robots.txt is requested with the
// Host header the origin's pages carry, default port left out, so that a
// virtual host matching Host exactly serves it.
func TestRobotsFetchHostHeader(t *testing.T) {
	var robotsHosts []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			robotsHosts = append(robotsHosts, r.Host)
			if r.Host != "vhost.example" {
				http.NotFound(w, r)
				return
			}
			io.WriteString(w, "User-agent: *\nDisallow: /private\n")
			return
		}
		io.WriteString(w, "page")
	}))
	defer srv.Close()
	base := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return new(net.Dialer).DialContext(ctx, network, srv.Listener.Addr().String())
	}}
	defer base.CloseIdleConnections()
	tr := New(base, quick...)

	_, err := (&http.Client{Transport: tr}).Get("http://vhost.example/private")
	if !errors.Is(err, ErrRobotsBlocked) {
		t.Errorf("GET /private = %v; want ErrRobotsBlocked (robots.txt fetched with Host %q)", err, robotsHosts)
	}
}

// panicky is what a base transport does wrong, for the fault tests.
type panicky int

const (
	basePanics panicky = iota
	baseReturnsNothing
	baseReturnsNoBody
)

func (p panicky) answer(r *http.Request) (*http.Response, error) {
	switch p {
	case basePanics:
		panic("base exploded")
	case baseReturnsNothing:
		return nil, nil
	}
	resp := respond(r, 200, "")
	resp.Body = nil
	return resp, nil
}

// TestBaseMisbehavesFetchingRobots checks that a base transport that
// panics, or answers with no response or no body, while fetching
// robots.txt (on the fetch's own goroutine) makes the file unreachable with
// an error that says what happened, instead of killing the process.
func TestBaseMisbehavesFetchingRobots(t *testing.T) {
	tests := []struct {
		name string
		p    panicky
		want string
	}{
		{"panic", basePanics, "panicked"},
		{"nil response, nil error", baseReturnsNothing, "no response and no error"},
		{"nil body", baseReturnsNoBody, "without a body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := &fakeBase{fn: func(r *http.Request) (*http.Response, error) {
					if r.URL.Path == "/robots.txt" {
						return tt.p.answer(r)
					}
					return respond(r, 200, "ok"), nil
				}}
				tr := New(base, quick...)
				req, _ := http.NewRequest("GET", "http://h/page", nil)
				d, err := tr.Check(req)
				if err != nil {
					t.Fatal(err)
				}
				if !d.Allowed || !strings.Contains(d.RobotsErr, tt.want) {
					t.Errorf("Check = allowed %v, RobotsErr %q; want allowed (FailOpen) and an error saying %q", d.Allowed, d.RobotsErr, tt.want)
				}
				resp, err := get(tr, "http://h/page", "")
				if err != nil {
					t.Fatalf("page after the failed fetch: %v", err)
				}
				resp.Body.Close()
			})
		})
	}
}

// TestBaseMisbehavesOnAPage checks the page path: a panic of the base goes
// on to the caller but frees the host's slot, and (nil, nil) from the base
// becomes an error, not a nil response.
func TestBaseMisbehavesOnAPage(t *testing.T) {
	t.Run("panic frees the slot", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			base := &fakeBase{fn: func(r *http.Request) (*http.Response, error) {
				if r.URL.Path == "/boom" {
					panic("base exploded")
				}
				return respond(r, 200, "ok"), nil
			}}
			tr := New(base, quick...)
			func() {
				defer func() {
					if p := recover(); p == nil {
						t.Errorf("RoundTrip did not pass the base's panic on")
					}
				}()
				get(tr, "http://h/boom", "")
			}()
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "GET", "http://h/next", nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatalf("request after the panic: %v; want the slot free", err)
			}
			resp.Body.Close()
			if s := tr.Stats()[0]; s.InFlight != 0 {
				t.Errorf("in flight = %d; want 0", s.InFlight)
			}
		})
	})
	t.Run("nil response, nil error", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			base := &fakeBase{fn: func(r *http.Request) (*http.Response, error) {
				if r.URL.Path == "/robots.txt" {
					return respond(r, 404, ""), nil
				}
				return nil, nil
			}}
			tr := New(base, quick...)
			req, _ := http.NewRequest("GET", "http://h/page", nil)
			resp, err := tr.RoundTrip(req)
			if resp != nil || err == nil || !strings.Contains(err.Error(), "no response and no error") {
				t.Errorf("RoundTrip = %v, %v; want nil and an error naming the base's fault", resp, err)
			}
		})
	})
}
