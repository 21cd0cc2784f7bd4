package robotstxt

import (
	"net/url"
	"testing"
)

func TestRequestPath(t *testing.T) {
	tests := []struct {
		name   string
		u      *url.URL
		want   string
		wantOK bool
	}{
		{"path and query", &url.URL{Scheme: "http", Host: "h", Path: "/a b", RawQuery: "q=1"}, "/a%20b?q=1", true},
		{"no path", &url.URL{Scheme: "http", Host: "h"}, "/", true},
		{"opaque absolute form", &url.URL{Scheme: "http", Host: "h", Opaque: "//h/private/page"}, "/private/page", true},
		{"opaque absolute form with a query", &url.URL{Scheme: "http", Host: "h", Opaque: "//h/p", RawQuery: "q=1"}, "/p?q=1", true},
		{"opaque absolute form, query and no path", &url.URL{Scheme: "http", Host: "h", Opaque: "//h?q=1"}, "/?q=1", true},
		{"opaque absolute form, no path", &url.URL{Scheme: "http", Host: "h", Opaque: "//h"}, "/", true},
		{"opaque path as written", &url.URL{Scheme: "http", Host: "h", Opaque: "/a%2Fb"}, "/a%2Fb", true},
		{"opaque wins over Path", &url.URL{Scheme: "http", Host: "h", Path: "/robots.txt", Opaque: "//h/private"}, "/private", true},
		{"opaque asterisk", &url.URL{Scheme: "http", Host: "h", Opaque: "*"}, "", false},
		{"opaque that is no path", &url.URL{Scheme: "http", Host: "h", Opaque: "private/page"}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := RequestPath(tt.u)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("RequestPath(%#v) = %q, %v; want %q, %v", tt.u, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

// TestTestOpaque checks that Test decides an opaque URL on the path the
// server receives, not on its absolute form.
func TestTestOpaque(t *testing.T) {
	f := Parse([]byte("User-agent: *\nDisallow: /\n"))
	tests := []struct {
		name string
		u    *url.URL
		want bool
	}{
		{"absolute form", &url.URL{Scheme: "http", Host: "h", Opaque: "//h/private/page"}, false},
		{"path as written", &url.URL{Scheme: "http", Host: "h", Opaque: "/private/page"}, false},
		{"robots.txt itself", &url.URL{Scheme: "http", Host: "h", Opaque: "//h/robots.txt"}, true},
		{"Path says robots.txt, Opaque does not", &url.URL{Scheme: "http", Host: "h", Path: "/robots.txt", Opaque: "//h/private"}, false},
		{"no path", &url.URL{Scheme: "http", Host: "h", Opaque: "*"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if m, _ := f.Test("MyBot", tt.u); m.Allowed != tt.want {
				t.Errorf("Test(%#v).Allowed = %v; want %v", tt.u, m.Allowed, tt.want)
			}
		})
	}
}
