package polite

import (
	"net/http"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/polite-go/polite/pace"
)

func TestReady(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		base := &fakeBase{fn: func(r *http.Request) (*http.Response, error) {
			switch r.URL.Path {
			case "/robots.txt":
				return respond(r, 200, "User-agent: *\nCrawl-delay: 3\n"), nil
			case "/slow":
				<-release
			case "/busy":
				return respond(r, 429, "", "Retry-After", "60"), nil
			}
			return respond(r, 200, "ok"), nil
		}}
		tr := New(base, WithPacing(pace.Policy{Jitter: pace.None}))
		ready := func(u string) Decision {
			t.Helper()
			req, _ := http.NewRequest("GET", u, nil)
			r, err := tr.Ready(req)
			if err != nil {
				t.Fatal(err)
			}
			if want := (pace.Policy{Jitter: pace.None}).Effective(); r.Policy != want {
				t.Errorf("Ready(%s).Policy = %+v; want the transport's, %+v", u, r.Policy, want)
			}
			r.Policy = pace.Policy{}
			return r
		}
		if got := ready("http://h/a"); got.RobotsKnown || got.Allowed || !got.Next.IsZero() || got.Busy || got.Robots.URL != "" {
			t.Errorf("unknown host: %+v; want robots.txt not known, not allowed, no start known", got)
		}
		t0 := time.Now()
		resp, err := get(tr, "http://h/a", "")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		started := time.Since(t0) // the robots.txt fetch came first, then the Crawl-delay
		if got := ready("http://h/b"); !got.Next.Equal(t0.Add(started+3*time.Second)) || !got.RobotsKnown || !got.Allowed ||
			got.CrawlDelay != 3*time.Second || got.Pace != 3*time.Second || got.Robots.URL != "http://h/robots.txt" || got.Busy {
			t.Errorf("after a page: %+v; want ready at +%v, robots.txt known and allowing it, a 3s Crawl-delay", got, started+3*time.Second)
		}
		if got := ready("https://h/b"); got.RobotsKnown {
			t.Errorf("another origin of the host: %+v; want robots.txt not known", got)
		}
		if n := len(base.hitList()); n != 2 {
			t.Errorf("Ready sent requests: %d on the wire; want 2", n)
		}

		time.Sleep(3 * time.Second)
		go get(tr, "http://h/slow", "")
		synctest.Wait()
		if got := ready("http://h/b"); !got.Busy {
			t.Errorf("with the only slot taken: %+v; want busy", got)
		}
		close(release)
		synctest.Wait()

		time.Sleep(3 * time.Second)
		resp, err = get(tr, "http://h/busy", "")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := ready("http://h/b"); got.Next != time.Now().Add(time.Minute) || got.Busy {
			t.Errorf("after a 429 with Retry-After: 60: %+v; want ready in 1m, not busy", got)
		}
	})
}

// TestTransportRobots checks that the public Robots of an origin comes
// from the cache, with its Sitemaps, and is nil when no file applies.
func TestTransportRobots(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &fakeBase{fn: func(r *http.Request) (*http.Response, error) {
			if r.URL.Host == "h" {
				return respond(r, 200, "Sitemap: http://h/a.xml\nUser-agent: *\nDisallow: /x\nSitemap: http://h/b.xml\n"), nil
			}
			return respond(r, 404, ""), nil
		}}
		tr := New(base, quick...)
		req, _ := http.NewRequest("GET", "http://h/page", nil)
		for range 2 {
			r, err := tr.Robots(req)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Sitemaps(); !slices.Equal(got, []string{"http://h/a.xml", "http://h/b.xml"}) {
				t.Errorf("Sitemaps() = %q", got)
			}
		}
		if n := base.count("/robots.txt"); n != 1 {
			t.Errorf("%d robots.txt fetches for two calls; want 1, then the cache", n)
		}
		req, _ = http.NewRequest("GET", "http://other/page", nil)
		if r, err := tr.Robots(req); r != nil || err != nil {
			t.Errorf("Robots of an origin whose robots.txt is 404 = %v, %v; want nil, nil", r, err)
		}
	})
}
