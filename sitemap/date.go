package sitemap

import (
	"strings"
	"time"
)

// w3cLayouts are the forms of a date that the protocol's <lastmod> takes
// (W3C Datetime: https://www.w3.org/TR/NOTE-datetime), as RFC 3339 and
// Atom's <updated> write them too; and, read as UTC, the same without a
// time zone or with a space for the 'T', which sitemaps write often
// enough. A fraction of a second is read after the seconds whatever the
// layout says.
var w3cLayouts = []string{
	"2006-01-02T15:04:05Z07:00",
	"2006-01-02",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04:05Z0700",
	"2006-01-02T15:04:05",
	"2006-01-02T15:04",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05",
	"2006-01",
	"2006",
}

// rfc822Layouts are the forms of an RSS <pubDate> (RFC 822 §5, with the
// four-digit years of RFC 1123), without the day of the week, which
// parseDate drops, and with the zone as a number, to which parseDate turns
// the zone names.
var rfc822Layouts = []string{
	"2 Jan 2006 15:04:05 -0700",
	"2 Jan 2006 15:04 -0700",
	"2 Jan 06 15:04:05 -0700",
	"2 Jan 06 15:04 -0700",
}

// rfc822Zones are the zone names of RFC 822 §5.1, as offsets.
var rfc822Zones = map[string]string{
	"UT": "+0000", "UTC": "+0000", "GMT": "+0000", "Z": "+0000",
	"EST": "-0500", "EDT": "-0400", "CST": "-0600", "CDT": "-0500",
	"MST": "-0700", "MDT": "-0600", "PST": "-0800", "PDT": "-0700",
}

// parseDate reads s as a W3C date or an RFC 822 one, and returns it in
// UTC; the zero Time when it is neither.
func parseDate(s string) time.Time {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 64 {
		return time.Time{}
	}
	for _, l := range w3cLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC()
		}
	}
	if i := strings.IndexByte(s, ','); i >= 0 {
		s = strings.TrimSpace(s[i+1:]) // "Thu, 05 Jan 2017 ...": the day of the week
	}
	f := strings.Fields(s)
	if len(f) < 5 {
		return time.Time{} // a date with no zone does not say when it was
	}
	if off, ok := rfc822Zones[strings.ToUpper(f[len(f)-1])]; ok {
		f[len(f)-1] = off
	}
	s = strings.Join(f, " ")
	for _, l := range rfc822Layouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}
