package audit

// Bounds on the timelines of Options.Timelines: the requests and the marks
// (violations, and 429 or 503 answers) each crawler keeps, evenly spread
// over its requests; the events all crawlers keep together; and how many
// crawlers, the first of the report, get a timeline.
const (
	timelineTicks  = 2000
	timelineMarks  = 500
	timelineTotal  = 400_000
	timelinesDrawn = 20
	timelineLanes  = 8 // hosts drawn apart; the others share a lane
)

// A timelineBudget is what the timelines of all crawlers may keep.
type timelineBudget struct{ left int }

func newTimelineBudget() *timelineBudget { return &timelineBudget{left: timelineTotal} }

func (b *timelineBudget) newSample() *timelineSample {
	return &timelineSample{ticks: sampled{budget: b, limit: timelineTicks, stride: 1}, marks: sampled{budget: b, limit: timelineMarks, stride: 1}}
}

// A timelineEvent is a request as the timeline draws it.
type timelineEvent struct {
	start, end int64
	asked      int64 // the pause a 429 or 503 asked for
	host       uint32
	status     uint16
	flags      uint8 // the kinds of violation it is, a bit each
	robots     bool
}

// A timelineSample keeps a crawler's requests, and apart its marks, which
// are rarer and must not be thinned out with the rest.
type timelineSample struct {
	ticks, marks sampled
}

func (s *timelineSample) add(r *logRecord, host uint32, robots bool, flags uint8) {
	e := timelineEvent{start: r.start, end: r.end, host: host, status: uint16(min(r.status, 999)), flags: flags, robots: robots}
	s.ticks.add(e)
	if flags != 0 || r.status == 429 || r.status == 503 {
		e.asked = -1
		if r.retryAfter >= 0 {
			e.asked = r.retryAfter
		}
		s.marks.add(e)
	}
}

// sampled keeps one event in stride, and when full drops every other one
// and doubles the stride, so that what it keeps spreads evenly over all
// it was given.
type sampled struct {
	budget *timelineBudget
	limit  int
	events []timelineEvent
	stride int64
	seen   int64
}

func (s *sampled) add(e timelineEvent) {
	s.seen++
	if (s.seen-1)%s.stride != 0 {
		return
	}
	if len(s.events) == s.limit || s.budget.left == 0 && len(s.events) > 0 {
		kept := s.events[:0]
		for i := 0; i < len(s.events); i += 2 {
			kept = append(kept, s.events[i])
		}
		s.budget.left += len(s.events) - len(kept)
		s.events = kept
		s.stride *= 2
		if (s.seen-1)%s.stride != 0 {
			return
		}
	}
	if s.budget.left == 0 {
		return
	}
	s.budget.left--
	s.events = append(s.events, e)
}
