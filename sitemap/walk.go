package sitemap

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// A Source is a sitemap to start a walk from.
type Source struct {
	// URL is the sitemap's absolute http or https URL.
	URL string
	// Robots is the URL of the robots.txt whose Sitemap line named URL, or
	// "" if none did; see Reader.Robots.
	Robots string
}

// A Walker fetches sitemaps through its Client, reads them, follows the
// sitemaps their indexes list, and hands each page URL to a function, as
// it reads them. It holds only the sitemaps still to fetch, at most
// Limits.MaxSitemaps of them, and the entry being read.
//
// A Walker's fields are not changed by Walk, which may run in several
// goroutines at once.
type Walker struct {
	// Client fetches the sitemaps. Give one whose Transport is the
	// crawler's polite transport, so that each fetch waits its turn with
	// the host's other requests, is counted with them, and is refused
	// when robots.txt disallows the sitemap's URL. If nil,
	// http.DefaultClient is used, past any politeness layer.
	Client *http.Client
	// Limits bound each file and the walk; zero fields take their
	// defaults.
	Limits Limits
	// Lenient takes entries outside a sitemap's scope too; see
	// Reader.Lenient.
	Lenient bool
	// Since, when not zero, passes over the entries that say they last
	// changed before it: pages, and sitemaps, which are then not fetched.
	// An entry that gives no date is taken.
	Since time.Time
	// Report, when not nil, is called after each sitemap the walk fetches
	// or tries to, with what came of it. It is called from the goroutine
	// that called Walk, with no lock held.
	Report func(Report)
}

// A Report says what a walk did with one sitemap.
type Report struct {
	// URL is the sitemap's URL.
	URL string
	// Robots is the robots.txt that named it, or named the index that
	// listed it; "" if none did.
	Robots string
	// Depth is 0 for a sitemap the walk started from, and one more than
	// its index's for a sitemap an index listed.
	Depth int
	// Format is what the sitemap was found to be; "" if it was not read.
	Format Format
	// URLs counts the page URLs passed on, and Sitemaps the sitemaps it
	// listed that the walk will fetch.
	URLs, Sitemaps int
	// Unchanged counts the entries passed over for a LastMod before
	// Walker.Since.
	Unchanged int
	// Skipped holds the first 100 parts of the file passed over, and
	// NumSkipped counts them all.
	Skipped    []Skip
	NumSkipped int
	// Err says why the sitemap was not read, or not read to its end: the
	// Client's error (a network error, a refusal by the transport, such
	// as polite's ErrRobotsBlocked), a [*StatusError], or a [*ReadError];
	// nil when it was read whole.
	Err error
}

// Stats counts what a walk did.
type Stats struct {
	// Sitemaps counts the sitemaps fetched or tried, and Failed those of
	// them with an error: not fetched, not sitemaps, or not read to their
	// end.
	Sitemaps, Failed int
	// URLs counts the page URLs passed on.
	URLs int
	// Unchanged counts the entries passed over for a LastMod before
	// Walker.Since.
	Unchanged int
	// Skipped counts the parts of files passed over, and the sources past
	// Limits.MaxSitemaps.
	Skipped int
}

// A walkItem is a sitemap a walk will fetch.
type walkItem struct {
	url    string
	robots string
	depth  int
}

// Walk fetches the sitemaps of sources, and those their indexes list, to
// Limits.MaxDepth, each once, and calls fn with each page URL they list
// that is in scope and not older than Since, as it reads them. A sitemap
// that fails is reported, and the walk goes on with the others.
//
// Walk returns when every sitemap has been read, or when ctx ends or fn
// returns an error: it returns that error then. fn is called while the
// sitemap's response is read; it should not wait long.
func (w *Walker) Walk(ctx context.Context, sources []Source, fn func(Entry) error) (Stats, error) {
	lim := w.Limits.withDefaults()
	var st Stats
	seen := make(map[string]bool) // the sitemaps fetched or queued, by URL
	var queue []walkItem
	for _, s := range sources {
		key := sitemapKey(s.URL)
		switch {
		case seen[key]:
		case len(seen) == lim.MaxSitemaps:
			st.Skipped++
			w.report(Report{URL: s.URL, Robots: s.Robots,
				Err: fmt.Errorf("%w: a walk fetches at most %d sitemaps", ErrTooMany, lim.MaxSitemaps)})
		default:
			seen[key] = true
			queue = append(queue, walkItem{url: s.URL, robots: s.Robots})
		}
	}
	for len(queue) > 0 {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		it := queue[0]
		queue = queue[1:]
		rep, err := w.read(ctx, it, lim, fn, func(e Entry) (bool, string) {
			switch key := sitemapKey(e.URL); {
			case seen[key]:
				return false, "" // listed again: nothing to do
			case it.depth == lim.MaxDepth:
				return false, "nested deeper than MaxDepth"
			case len(seen) == lim.MaxSitemaps:
				return false, "more sitemaps than MaxSitemaps"
			default:
				seen[key] = true
				queue = append(queue, walkItem{url: e.URL, robots: it.robots, depth: it.depth + 1})
				return true, ""
			}
		})
		st.Sitemaps++
		if rep.Err != nil {
			st.Failed++
		}
		st.URLs += rep.URLs
		st.Unchanged += rep.Unchanged
		st.Skipped += rep.NumSkipped
		w.report(rep)
		if err != nil {
			return st, err
		}
	}
	return st, nil
}

// report calls w.Report, if set.
func (w *Walker) report(r Report) {
	if w.Report != nil {
		w.Report(r)
	}
}

// read fetches and reads one sitemap: it calls fn with each page, and
// follow with each sitemap, which says whether it queued the sitemap, or
// why it passes over it. It returns fn's error, or ctx's.
func (w *Walker) read(ctx context.Context, it walkItem, lim Limits, fn func(Entry) error, follow func(Entry) (bool, string)) (Report, error) {
	rep := Report{URL: it.url, Robots: it.robots, Depth: it.depth}
	u, err := url.Parse(it.url)
	if err != nil {
		rep.Err = err
		return rep, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, it.url, nil)
	if err != nil {
		rep.Err = err
		return rep, nil
	}
	client := w.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		rep.Err = err
		return rep, ctx.Err()
	}
	defer func() {
		// A short remainder is read so that the connection can be reused.
		io.CopyN(io.Discard, resp.Body, 4<<10)
		resp.Body.Close()
	}()
	if resp.StatusCode/100 != 2 {
		rep.Err = &StatusError{URL: it.url, StatusCode: resp.StatusCode}
		return rep, nil
	}
	r := NewReader(resp.Body, u)
	r.Robots, r.Lenient, r.Limits = it.robots, w.Lenient, lim
	err = w.entries(r, &rep, fn, follow)
	rep.Format, rep.Skipped, rep.NumSkipped = r.Format(), r.Skipped(), r.NumSkipped()
	if err == nil {
		err = ctx.Err()
	}
	return rep, err
}

// entries reads r's entries into rep, as read says, and returns fn's
// error.
func (w *Walker) entries(r *Reader, rep *Report, fn func(Entry) error, follow func(Entry) (bool, string)) error {
	for {
		e, err := r.Next()
		switch {
		case err == io.EOF:
			return nil
		case err != nil:
			rep.Err = err
			return nil
		case unchanged(e, w.Since):
			rep.Unchanged++
		case e.Sitemap:
			switch queued, why := follow(e); {
			case queued:
				rep.Sitemaps++
			case why != "":
				r.skip(r.lineNow(), e.URL, why)
			}
		default:
			if err := fn(e); err != nil {
				return err
			}
			rep.URLs++
		}
	}
}

// unchanged reports whether e says it last changed before since, when
// since is not zero.
func unchanged(e Entry, since time.Time) bool {
	return !since.IsZero() && !e.LastMod.IsZero() && e.LastMod.Before(since)
}

// sitemapKey returns the key by which a walk knows a sitemap's URL: its
// form as net/url writes it, with no fragment.
func sitemapKey(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}
