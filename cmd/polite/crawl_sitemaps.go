package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/polite-go/polite/robotstxt"
	"github.com/polite-go/polite/sitemap"
)

// sitemapBacklog bounds the URLs queued in the frontier while the sitemap
// walks add theirs: a walk waits for the workers to take some before it
// reads on, so that a site's thousands of sitemaps are streamed through
// the crawl, not held in it.
const sitemapBacklog = 1000

// robotsReader is the part of a polite transport that gives an origin's
// robots.txt, for the sitemaps it names.
type robotsReader interface {
	Robots(*http.Request) (*robotstxt.File, error)
}

// sitemapWalks walks the sitemaps of each origin of seeds, one walk per
// origin at once, and queues the page URLs they list as seeds. Each walk
// starts from the sitemaps that the origin's robots.txt names, or from
// /sitemap.xml when it names none; its fetches go through the crawler's
// client, paced with the host's other requests and refused where
// robots.txt disallows them. It reports each sitemap to report, from the
// walk's goroutine, and returns when every walk has started; the walks
// end with ctx, or when they have read everything.
func (c *crawler) sitemapWalks(ctx context.Context, seeds []*url.URL, report io.Writer) {
	origins := map[string]bool{}
	var reportMu sync.Mutex // serialises the reports of the walks
	for _, u := range seeds {
		origin := strings.ToLower(u.Scheme) + "://" + u.Host
		if origins[origin] {
			continue
		}
		origins[origin] = true
		var f *robotstxt.File
		if rr, ok := c.client.Transport.(robotsReader); ok {
			if req, err := http.NewRequestWithContext(ctx, http.MethodGet, origin+"/", nil); err == nil {
				f, _ = rr.Robots(req) // a robots.txt that cannot be had names no sitemap
			}
		}
		w := &sitemap.Walker{Client: c.client, Report: func(r sitemap.Report) {
			c.busy()
			if r.Err == nil {
				return
			}
			reportMu.Lock()
			defer reportMu.Unlock()
			fmt.Fprintf(report, "polite crawl: sitemap %s: %v\n", r.URL, unwrapURLError(r.Err))
		}}
		c.mu.Lock()
		c.walking++
		c.mu.Unlock()
		c.walks.Go(func() {
			defer c.walkEnded()
			st, _ := w.Walk(ctx, sitemap.FromRobots(origin+"/robots.txt", f), func(e sitemap.Entry) error {
				if err := c.waitBacklog(ctx); err != nil {
					return err
				}
				if u, err := url.Parse(e.URL); err == nil && (!c.opts.sameHost || c.isSeedHost(u.Host)) {
					c.enqueueFromSitemap(ctx, e.URL)
				}
				return nil
			})
			c.mu.Lock()
			c.sitemapsOf.sitemaps += st.Sitemaps
			c.sitemapsOf.failed += st.Failed
			c.sitemapsOf.urls += st.URLs
			c.mu.Unlock()
		})
	}
}

// waitBacklog waits until the frontier holds fewer than sitemapBacklog
// URLs, or ctx ends.
func (c *crawler) waitBacklog(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.frontier.Len() >= sitemapBacklog && ctx.Err() == nil {
		c.changed.Wait()
	}
	return ctx.Err()
}

// enqueueFromSitemap queues rawURL, which a sitemap lists, as a seed.
func (c *crawler) enqueueFromSitemap(ctx context.Context, rawURL string) {
	c.mu.Lock()
	_, seen := c.depth[rawURL]
	if !seen {
		c.fromSitemap[rawURL] = true
	}
	c.mu.Unlock()
	if !seen {
		c.enqueue(ctx, rawURL, 0)
	}
	c.mu.Lock()
	c.walkGen++
	c.changed.Broadcast()
	c.mu.Unlock()
}

// walkEnded counts a walk that has ended.
func (c *crawler) walkEnded() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.walking--
	c.walkGen++
	c.changed.Broadcast()
}

// waitWalks is for a worker that found the frontier empty: it waits until
// a walk has queued a URL or ended since gen, as walkGen counted it before
// the worker asked the frontier, and reports whether the worker should ask
// again; false when no walk is under way and none queued a URL since, or
// ctx ended.
func (c *crawler) waitWalks(ctx context.Context, gen uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.walking > 0 && c.walkGen == gen && ctx.Err() == nil {
		c.changed.Wait()
	}
	return c.walkGen != gen && ctx.Err() == nil
}
