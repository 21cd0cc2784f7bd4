package sitemap_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/pace"
	"github.com/polite-go/polite/sitemap"
)

// site is a base RoundTripper that serves files by path, and notes when
// each request reached it.
type site struct {
	files  map[string]string
	mu     sync.Mutex // guards starts and paths
	starts []time.Time
	paths  []string
}

func (s *site) RoundTrip(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	s.starts = append(s.starts, time.Now())
	s.paths = append(s.paths, req.URL.Path)
	s.mu.Unlock()
	body, ok := s.files[req.URL.Path]
	status := http.StatusOK
	if !ok {
		status = http.StatusNotFound
	}
	return &http.Response{StatusCode: status, Header: make(http.Header), Request: req,
		Body: io.NopCloser(strings.NewReader(body))}, nil
}

// TestWalkThroughPoliteTransport walks a site's sitemaps through a polite
// transport: each fetch, robots.txt's among them, starts no sooner than
// the pace after the one before, and a sitemap that robots.txt disallows
// is refused by the transport, reported, and never sent, while the walk
// goes on.
func TestWalkThroughPoliteTransport(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &site{files: map[string]string{
			"/robots.txt": "User-agent: *\nDisallow: /private/\nSitemap: https://example.com/maps/index.xml\n",
			"/maps/index.xml": `<sitemapindex>
				<sitemap><loc>https://example.com/maps/a.xml</loc></sitemap>
				<sitemap><loc>https://example.com/private/b.xml</loc></sitemap>
				<sitemap><loc>https://example.com/maps/c.txt</loc></sitemap></sitemapindex>`,
			"/maps/a.xml": `<urlset><url><loc>https://example.com/</loc></url><url><loc>https://example.com/blog/1</loc></url></urlset>`,
			"/maps/c.txt": "https://example.com/about\n",
		}}
		const pacing = 3 * time.Second
		tr := polite.New(s, polite.WithPacing(pace.Policy{BaseDelay: pacing, Jitter: pace.None, LatencyFactor: pace.None}))
		ctx := context.Background()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://example.com/", nil)
		f, err := tr.Robots(req)
		if err != nil {
			t.Fatal(err)
		}
		var refused error
		w := &sitemap.Walker{Client: &http.Client{Transport: tr}, Report: func(r sitemap.Report) {
			if strings.Contains(r.URL, "/private/") {
				refused = r.Err
			}
		}}
		var got []string
		st, err := w.Walk(ctx, sitemap.FromRobots("https://example.com/robots.txt", f), func(e sitemap.Entry) error {
			got = append(got, e.URL)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"https://example.com/", "https://example.com/blog/1", "https://example.com/about"}
		if !slices.Equal(got, want) || st.Sitemaps != 4 || st.Failed != 1 {
			t.Errorf("walked %q, %+v; want %q in 4 sitemaps, 1 failed", got, st, want)
		}
		if !errors.Is(refused, polite.ErrRobotsBlocked) {
			t.Errorf("the disallowed sitemap's report: %v; want polite.ErrRobotsBlocked", refused)
		}
		if wantPaths := []string{"/robots.txt", "/maps/index.xml", "/maps/a.xml", "/maps/c.txt"}; !slices.Equal(s.paths, wantPaths) {
			t.Errorf("the server was asked %q; want %q", s.paths, wantPaths)
		}
		for i := 1; i < len(s.starts); i++ {
			if gap := s.starts[i].Sub(s.starts[i-1]); gap < pacing {
				t.Errorf("%s started %v after %s; want at least %v", s.paths[i], gap, s.paths[i-1], pacing)
			}
		}
	})
}
