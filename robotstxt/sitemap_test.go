package robotstxt

import (
	"slices"
	"testing"
)

// TestSitemapValues checks that a Sitemap line counts only with an
// absolute http or https URL, and is skipped, with its reason, otherwise.
func TestSitemapValues(t *testing.T) {
	tests := []struct {
		value   string
		sitemap bool // in Sitemaps; otherwise skipped
	}{
		{"https://example.com/sitemap.xml", true},
		{"HTTP://example.com/s.xml", true},
		{"http://example.com/s.xml?page=2", true},
		{"not-a-url", false},
		{"/sitemap.xml", false},
		{"example.com/sitemap.xml", false},
		{"ftp://example.com/sitemap.xml", false},
		{"http:///sitemap.xml", false},
		{"http://exa mple.com/", false},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			line := "Sitemap: " + tt.value
			r := Parse([]byte("User-agent: *\nDisallow: /x\n" + line + "\n"))
			if got := slices.Contains(r.Sitemaps(), tt.value); got != tt.sitemap {
				t.Errorf("in Sitemaps: %v; want %v", got, tt.sitemap)
			}
			wantSkipped := []SkippedLine{{Line: 3, Text: line, Reason: skipBadSitemap}}
			if tt.sitemap {
				wantSkipped = nil
			}
			if got := r.Skipped(); !slices.Equal(got, wantSkipped) {
				t.Errorf("Skipped = %+v; want %+v", got, wantSkipped)
			}
		})
	}
	if r := Parse([]byte("Sitemap:\n")); r.NumSkipped() != 0 || len(r.Sitemaps()) != 0 {
		t.Errorf("an empty Sitemap: %d skipped, sitemaps %q; want neither", r.NumSkipped(), r.Sitemaps())
	}
}
