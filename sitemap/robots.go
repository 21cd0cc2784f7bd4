package sitemap

import (
	"net/url"

	"github.com/polite-go/polite/robotstxt"
)

// FromRobots returns the sitemaps to walk for the origin of the robots.txt
// at robotsURL, which f holds: those its Sitemap lines name, in order,
// each with robotsURL as its Robots; or, when it names none or f is nil
// (no robots.txt applies), /sitemap.xml on that origin, the usual place,
// which the protocol does not name. It returns nil if robotsURL is not an
// absolute URL.
func FromRobots(robotsURL string, f *robotstxt.File) []Source {
	u, err := url.Parse(robotsURL)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return nil
	}
	var out []Source
	if f != nil {
		for _, s := range f.Sitemaps() {
			if su, err := url.Parse(s); err == nil {
				s = su.String() // "HTTP://" as "http://"
			}
			out = append(out, Source{URL: s, Robots: robotsURL})
		}
	}
	if len(out) == 0 {
		out = append(out, Source{URL: (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/sitemap.xml"}).String()})
	}
	return out
}
