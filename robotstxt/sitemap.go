package robotstxt

import (
	"net/url"
	"strings"
)

// skipBadSitemap is why read skips a Sitemap line whose value is not
// an absolute http or https URL: the sitemaps protocol asks for a full
// URL, and a crawler could fetch nothing else.
const skipBadSitemap = "Sitemap not an absolute http(s) URL"

// isSitemapURL reports whether v, a Sitemap line's value, is an absolute
// http or https URL with a host.
func isSitemapURL(v string) bool {
	u, err := url.Parse(v)
	if err != nil || u.Host == "" {
		return false
	}
	return strings.EqualFold(u.Scheme, "http") || strings.EqualFold(u.Scheme, "https")
}
