package audit

import (
	"time"
	"unsafe"
)

// A server that writes a line when its answer ends, as nginx does, writes
// the line of a slow answer after the lines of requests that started
// later. Where lines give their durations, the requests wait in a
// startOrder to be judged in the order they started: a request is judged
// once no line still to come can have started before it, which a line
// written at time T cannot when its request took no longer than the
// longest duration seen, the window, and T less the window is past the
// request's start.

// Bounds on the requests waiting to be judged.
const (
	// maxWindow is the longest duration the window waits for. A request
	// that took longer is judged once the window has passed its start, and
	// the starts of such requests may be judged after later ones.
	maxWindow = int64(5 * time.Minute)

	// maxWaitingBytes bounds the memory of the requests waiting, their
	// request-targets included. Past it, the earliest start is judged
	// at once, so that a busy log's window holds what fits in it. The
	// heap's array, grown by doubling, may keep as much again.
	maxWaitingBytes = 8 << 20

	// waitingCost is what a waiting request holds beside its target.
	waitingCost = int(unsafe.Sizeof(waiting{}))
)

// A waiting request has been read and not yet judged.
type waiting struct {
	rec    logRecord // its target copied, its host and User-Agent dropped
	c      *crawler
	loc    lineLoc
	host   uint32
	robots bool
	seq    uint64 // its line's place among the lines read, for starts that tie
}

// A startOrder holds the requests waiting to be judged, in a heap by start,
// and what the lines read tell of the requests still to come.
type startOrder struct {
	heap   []waiting // by start, then seq
	bytes  int       // the memory the requests waiting hold, by waitingCost and their targets
	seq    uint64    // lines read
	latest int64     // the latest time a line was written at: its request's end
	window int64     // the longest duration seen, up to maxWindow
	spare  [][]byte  // the targets' buffers of requests judged, for those to come
}

// Bounds on the spare buffers: their number, and the largest kept.
const (
	maxSpare      = 64
	maxSpareBytes = 1 << 10
)

// read notes a request read, and reports whether it can be judged at once:
// nothing waits, and no line to come can have started before it.
func (o *startOrder) read(r *logRecord) (now bool) {
	o.seq++
	o.latest = max(o.latest, r.end)
	o.window = max(o.window, min(r.end-r.start, maxWindow))
	return len(o.heap) == 0 && o.due(r.start)
}

// due reports whether a request that started at start can be judged: no
// line to come can have started before it.
func (o *startOrder) due(start int64) bool { return start+o.window <= o.latest }

// next sets w to the request whose turn has come, the earliest start, when
// it is due or the requests waiting hold more than maxWaitingBytes; it
// reports whether there was one. Once w is judged, done takes its buffer
// back.
func (o *startOrder) next(w *waiting) bool {
	if len(o.heap) == 0 || !o.due(o.heap[0].rec.start) && o.bytes <= maxWaitingBytes {
		return false
	}
	*w = o.pop()
	return true
}

// done keeps the target's buffer of a request judged, for a request to
// come.
func (o *startOrder) done(w *waiting) {
	if len(o.spare) < maxSpare && cap(w.rec.target) <= maxSpareBytes {
		o.spare = append(o.spare, w.rec.target[:0])
	}
	*w = waiting{}
}

// wait adds a request to those waiting.
func (o *startOrder) wait(c *crawler, loc lineLoc, r *logRecord, host uint32, robots bool) {
	var buf []byte
	if n := len(o.spare); n > 0 {
		buf, o.spare = o.spare[n-1], o.spare[:n-1]
	}
	w := waiting{rec: *r, c: c, loc: loc, host: host, robots: robots, seq: o.seq}
	w.rec.target = append(buf, r.target...)
	w.rec.host, w.rec.ua = nil, nil
	o.bytes += waitingCost + len(w.rec.target)
	o.heap = append(o.heap, w)
	for i := len(o.heap) - 1; i > 0; {
		parent := (i - 1) / 2
		if !o.before(i, parent) {
			break
		}
		o.heap[i], o.heap[parent] = o.heap[parent], o.heap[i]
		i = parent
	}
}

// pop removes and returns the earliest start.
func (o *startOrder) pop() waiting {
	top := o.heap[0]
	last := len(o.heap) - 1
	o.heap[0] = o.heap[last]
	o.heap[last] = waiting{}
	o.heap = o.heap[:last]
	for i := 0; ; {
		least, left, right := i, 2*i+1, 2*i+2
		if left < len(o.heap) && o.before(left, least) {
			least = left
		}
		if right < len(o.heap) && o.before(right, least) {
			least = right
		}
		if least == i {
			break
		}
		o.heap[i], o.heap[least] = o.heap[least], o.heap[i]
		i = least
	}
	o.bytes -= waitingCost + len(top.rec.target)
	return top
}

// before reports whether the request at i of the heap started before the
// one at j, or at the same time and was read first.
func (o *startOrder) before(i, j int) bool {
	a, b := &o.heap[i], &o.heap[j]
	return a.rec.start < b.rec.start || a.rec.start == b.rec.start && a.seq < b.seq
}
