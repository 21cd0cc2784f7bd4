package polite

import (
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/polite-go/polite/pace"
)

// parseQuota reads the rate-limit fields of h, measuring an epoch-seconds
// reset against h's Date header (or the clock when it has none). It knows four
// styles, and reads the first that h has:
//
//   - RateLimit and RateLimit-Policy (draft-ietf-httpapi-ratelimit-headers,
//     versions 08 and later): lists of items such as `"default";r=50;t=30`
//     and `"default";q=100;w=60`; of several items, the one that leaves the
//     fewest requests per second until its reset binds.
//   - RateLimit as a dictionary (the draft's version 07, of June 2023):
//     `limit=100, remaining=50, reset=5`, the reset in seconds from now.
//     Its remaining key is optional; without it the field says nothing.
//   - RateLimit-Remaining, RateLimit-Reset and RateLimit-Limit (the
//     draft's versions up to 06): the reset in seconds from now.
//   - X-RateLimit-Remaining, X-RateLimit-Reset and X-RateLimit-Limit, as
//     many APIs send them: the reset in seconds from now, or, when it is
//     a number of seconds since 1970 (at least 10^9), as a time. GitHub's
//     X-RateLimit-Resource names the quota's partition.
//   - X-RateLimit-Remaining-Requests, X-RateLimit-Reset-Requests and
//     X-RateLimit-Limit-Requests, and the same three for -Tokens beside
//     them, as OpenAI sends them: the reset a duration ("1s", "6m0s", "20ms") or
//     seconds. Of the two quotas, the tighter binds: a token quota counts
//     as the requests it leaves at the request quota's rate (its
//     remaining tokens times the request limit over the token limit),
//     and one that is exhausted holds until its own reset.
//
// A field that is missing, negative, not a number or not finite makes the
// whole style unusable; Known is then false. Callers cap the reset.
func parseQuota(h http.Header) pace.Quota {
	if !hasQuotaFields(h) { // most responses: no call, no copy
		return pace.Quota{}
	}
	q, _ := readQuota(h)
	return q
}

// hasQuotaFields reports whether h has the field that makes one of the
// styles readQuota reads, looked up by its canonical key.
func hasQuotaFields(h http.Header) bool {
	return len(h) > 0 && (h["Ratelimit"] != nil || h["Ratelimit-Remaining"] != nil ||
		h["X-Ratelimit-Remaining"] != nil || h["X-Ratelimit-Remaining-Requests"] != nil)
}

// An unreadableField is a rate-limit field that a response had and
// parseQuota could not read: a value that is not a number where one
// belongs, or a RateLimit field none of whose items it could use. Name is
// empty when there is none. A field that is missing is not one, nor is
// RateLimit-Policy, which only completes RateLimit.
type unreadableField struct {
	Name  string // as the draft or the APIs spell it: "RateLimit-Reset"
	Value string // the field's lines, joined by ", "
}

// readQuota is parseQuota, and also returns the first field of the style
// it read that it could not read.
func readQuota(h http.Header) (pace.Quota, unreadableField) {
	// The headers are looked up by their canonical keys directly: this runs
	// on every response.
	if len(h) == 0 {
		return pace.Quota{}, unreadableField{}
	}
	if v := h["Ratelimit"]; len(v) > 0 {
		field := strings.Join(v, ",")
		q, ok := pace.Quota{}, false
		if isDictionary(field) {
			q, ok = dictionaryQuota(field)
		} else {
			q, ok = parseRateLimit(field, strings.Join(h["Ratelimit-Policy"], ","))
		}
		if !ok {
			return q, unreadableField{"RateLimit", strings.Join(v, ", ")}
		}
		return q, unreadableField{}
	}
	if v := h["Ratelimit-Remaining"]; len(v) > 0 {
		return fieldQuota(h, draftFields, v[0])
	}
	if v := h["X-Ratelimit-Remaining"]; len(v) > 0 {
		q, f := fieldQuota(h, xFields, v[0])
		if q.Known {
			q.Partition = partitionName(h.Get("X-Ratelimit-Resource"))
		}
		return q, f
	}
	if len(h["X-Ratelimit-Remaining-Requests"]) > 0 { // the tokens' fields come with it
		return openAIQuota(h)
	}
	return pace.Quota{}, unreadableField{}
}

// maxPartitionName bounds the bytes of a partition's name that a server
// gives and the transport keeps.
const maxPartitionName = 64

// partitionName returns the name of a partition as a server gave it, cut
// to maxPartitionName bytes.
func partitionName(v string) string {
	v = strings.TrimSpace(v)
	if len(v) > maxPartitionName {
		v = v[:maxPartitionName]
	}
	return v
}

// The field names of OpenAI's two quotas.
var (
	requestFields = fieldNames{
		remaining: [2]string{"X-Ratelimit-Remaining-Requests", "X-RateLimit-Remaining-Requests"},
		reset:     [2]string{"X-Ratelimit-Reset-Requests", "X-RateLimit-Reset-Requests"},
		limit:     [2]string{"X-Ratelimit-Limit-Requests", "X-RateLimit-Limit-Requests"},
		duration:  true,
	}
	tokenFields = fieldNames{
		remaining: [2]string{"X-Ratelimit-Remaining-Tokens", "X-RateLimit-Remaining-Tokens"},
		reset:     [2]string{"X-Ratelimit-Reset-Tokens", "X-RateLimit-Reset-Tokens"},
		limit:     [2]string{"X-Ratelimit-Limit-Tokens", "X-RateLimit-Limit-Tokens"},
		duration:  true,
	}
)

// openAIQuota reads OpenAI's fields: a quota of requests and one of
// tokens, of which the tighter binds (see parseQuota). Either may be
// missing; a quota that cannot be read is left out, and the first
// unreadable field is reported.
func openAIQuota(h http.Header) (pace.Quota, unreadableField) {
	var req, tok pace.Quota
	var bad unreadableField
	if v := h["X-Ratelimit-Remaining-Requests"]; len(v) > 0 {
		req, bad = fieldQuota(h, requestFields, v[0])
	}
	if v := h["X-Ratelimit-Remaining-Tokens"]; len(v) > 0 {
		var f unreadableField
		tok, f = fieldQuota(h, tokenFields, v[0])
		if bad.Name == "" {
			bad = f
		}
	}
	switch {
	case !tok.Known:
		return req, bad
	case !req.Known:
		return tok, bad
	case tok.Remaining == 0 || req.Remaining == 0:
		// An exhausted quota binds until its reset; of two, the later.
		if tok.Remaining == 0 && (req.Remaining != 0 || tok.Reset > req.Reset) {
			return tok, bad
		}
		return req, bad
	}
	if req.Limit > 0 && tok.Limit > 0 {
		// The token quota in requests, at the request quota's rate.
		scale := float64(req.Limit) / float64(tok.Limit)
		tok.Remaining = int64(math.Ceil(float64(tok.Remaining) * scale))
		tok.Limit = req.Limit
	}
	if tighter(tok, req) {
		return tok, bad
	}
	return req, bad
}

// fieldNames are the names of one of the older styles' fields: canonical,
// to look them up, and as written, to report them.
type fieldNames struct {
	remaining, reset, limit [2]string // canonical key, name as written
	epoch                   bool      // a large reset may be a time in seconds since 1970
	duration                bool      // the reset may be a Go duration, "6m0s"
}

var (
	draftFields = fieldNames{
		remaining: [2]string{"Ratelimit-Remaining", "RateLimit-Remaining"},
		reset:     [2]string{"Ratelimit-Reset", "RateLimit-Reset"},
		limit:     [2]string{"Ratelimit-Limit", "RateLimit-Limit"},
	}
	xFields = fieldNames{
		remaining: [2]string{"X-Ratelimit-Remaining", "X-RateLimit-Remaining"},
		reset:     [2]string{"X-Ratelimit-Reset", "X-RateLimit-Reset"},
		limit:     [2]string{"X-Ratelimit-Limit", "X-RateLimit-Limit"},
		epoch:     true,
	}
)

// fieldQuota reads the older styles: one field each for the remaining
// requests, the reset and the limit, of which the last two may be missing.
func fieldQuota(h http.Header, names fieldNames, remaining string) (pace.Quota, unreadableField) {
	r, ok := parseCount(remaining)
	if !ok {
		return pace.Quota{}, unreadableField{names.remaining[1], remaining}
	}
	reset := h.Get(names.reset[0])
	secs, ok := parseSeconds(reset)
	if !ok && names.duration {
		secs, ok = parseDuration(reset)
	}
	if !ok {
		if reset == "" {
			return pace.Quota{}, unreadableField{} // missing: nothing to report
		}
		return pace.Quota{}, unreadableField{names.reset[1], reset}
	}
	q := pace.Quota{Known: true, Remaining: r, Reset: secondsDuration(secs)}
	if names.epoch && secs >= 1e9 {
		now, ok := parseHTTPDate(h.Get("Date"))
		if !ok {
			now = time.Now()
		}
		q.Reset = max(time.Unix(0, 0).Add(secondsDuration(secs)).Sub(now), 0)
	}
	if limit := h.Get(names.limit[0]); limit != "" {
		l, ok := parseCount(limit)
		if !ok {
			return q, unreadableField{names.limit[1], limit}
		}
		q.Limit = l
	}
	return q, unreadableField{}
}

// isDictionary reports whether a RateLimit field is a dictionary, as
// version 07 of the draft wrote it, rather than a list of items: its first
// member is a key and a value, where an item has a name, a string or a
// token, which has no "=".
func isDictionary(field string) bool {
	first, _, _ := strings.Cut(field, ",")
	first, _, _ = strings.Cut(first, ";")
	return strings.Contains(first, "=")
}

// dictionaryQuota reads a RateLimit field of version 07 of the draft, a
// dictionary (RFC 8941 §3.2) of limit, remaining and reset; other keys and
// every parameter are ignored, and of a key given twice the last counts.
// ok is false when a key's value cannot be read, or reset is missing while
// remaining is given; a quota read before an unreadable limit still holds.
func dictionaryQuota(field string) (q pace.Quota, ok bool) {
	var remaining, reset, limit string
	for member := range strings.SplitSeq(field, ",") {
		member, _, _ = strings.Cut(member, ";")
		k, v, _ := strings.Cut(member, "=")
		switch strings.TrimSpace(k) {
		case "remaining":
			remaining = v
		case "reset":
			reset = v
		case "limit":
			limit = v
		}
	}
	if remaining == "" {
		// Optional in version 07: the field gives no quota to go by.
		_, ok := parseCount(limit)
		return pace.Quota{}, ok || limit == ""
	}
	r, okR := parseCount(remaining)
	secs, okT := parseSeconds(reset)
	if !okR || !okT {
		return pace.Quota{}, false
	}
	q = pace.Quota{Known: true, Remaining: r, Reset: secondsDuration(secs)}
	if limit != "" {
		if q.Limit, ok = parseCount(limit); !ok {
			q.Limit = 0
			return q, false
		}
	}
	return q, true
}

// parseRateLimit reads the RateLimit field as a list, and the quota of the
// binding item's policy from the RateLimit-Policy field; the partition is
// the pk parameter of the item, or else of its policy. ok is false when
// no item could be used.
func parseRateLimit(field, policies string) (q pace.Quota, ok bool) {
	var best pace.Quota
	var bestName string
	for item := range strings.SplitSeq(field, ",") {
		name, params := sfItem(item)
		r, okR := parseCount(params["r"])
		t, okT := parseSeconds(params["t"])
		if !okR || !okT {
			continue
		}
		q := pace.Quota{Known: true, Remaining: r, Reset: secondsDuration(t), Partition: partitionName(params["pk"])}
		if !best.Known || tighter(q, best) {
			best, bestName = q, name
		}
	}
	if !best.Known {
		return pace.Quota{}, false
	}
	for item := range strings.SplitSeq(policies, ",") {
		if name, params := sfItem(item); name == bestName {
			if l, ok := parseCount(params["q"]); ok {
				best.Limit = l
			}
			if best.Partition == "" {
				best.Partition = partitionName(params["pk"])
			}
		}
	}
	return best, true
}

// Bounds of what the transport keeps and says of unreadable fields: the
// pairs of a pacing key and a field it remembers having reported, and the
// bytes of a field's value an event carries.
const (
	maxFieldNotes = 1024
	maxFieldValue = 100
)

// fieldNotes remembers the unreadable fields a transport has reported, so
// that it reports each once per pacing key.
type fieldNotes struct {
	mu   sync.Mutex         // guards seen
	seen map[[2]string]bool // pacing key and field name; lazily initialized, emptied when full
}

// first reports whether field is unreadable for the first time for key,
// and remembers that it is.
func (n *fieldNotes) first(key, field string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	k := [2]string{key, field}
	if n.seen[k] {
		return false
	}
	if n.seen == nil || len(n.seen) >= maxFieldNotes {
		n.seen = make(map[[2]string]bool)
	}
	n.seen[k] = true
	return true
}

// reportUnreadable emits an [EventUnreadableField] when h, a response to
// a request for u, has a rate-limit field that cannot be read, once per
// key and field. The caller holds no lock.
func (t *PoliteTransport) reportUnreadable(key string, u *url.URL, h http.Header) {
	_, f := readQuota(h)
	if f.Name == "" || !t.fieldNotes.first(key, f.Name) {
		return
	}
	value := f.Value
	if cut := maxFieldValue; len(value) > cut {
		for cut > 0 && !utf8.RuneStart(value[cut]) {
			cut--
		}
		value = value[:cut] + "…"
	}
	t.events.emit(Event{Kind: EventUnreadableField, Key: key, URL: u.String(), Field: f.Name, Value: value})
}

// tighter reports whether a leaves fewer requests per second until its
// reset than b.
func tighter(a, b pace.Quota) bool {
	// a.remaining/a.reset < b.remaining/b.reset, without dividing by zero.
	return float64(a.Remaining)*b.Reset.Seconds() < float64(b.Remaining)*a.Reset.Seconds() ||
		a.Remaining == 0 && b.Remaining == 0 && a.Reset > b.Reset
}

// sfItem reads one item of a structured field list (RFC 8941 §3.1) as the
// rate-limit fields use it: a name, a string or a token, then parameters
// ";key=value". It is lenient: a malformed item gives what could be read.
func sfItem(item string) (name string, params map[string]string) {
	parts := strings.Split(item, ";")
	name = strings.Trim(strings.TrimSpace(parts[0]), `"`)
	params = make(map[string]string, len(parts)-1)
	for _, p := range parts[1:] {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		params[k] = v
	}
	return name, params
}

// parseCount reads a non-negative whole number.
func parseCount(v string) (int64, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	return n, err == nil && n >= 0
}

// parseSeconds reads a non-negative, finite number of seconds, which may
// have a fraction.
func parseSeconds(v string) (float64, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	return f, err == nil && f >= 0 && !math.IsInf(f, 0)
}

// parseDuration reads a non-negative Go duration, "6m0s" or "20ms", as
// seconds.
func parseDuration(v string) (float64, bool) {
	d, err := time.ParseDuration(strings.TrimSpace(v))
	return d.Seconds(), err == nil && d >= 0
}

// secondsDuration converts seconds to a Duration, saturating.
func secondsDuration(secs float64) time.Duration {
	if secs >= float64(math.MaxInt64)/float64(time.Second) {
		return math.MaxInt64
	}
	return time.Duration(secs * float64(time.Second))
}
