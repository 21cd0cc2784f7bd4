package politeredis

import (
	"context"
	"time"

	"github.com/polite-go/polite/frontier"
)

// A pendingEnd is the end of a turn that Redis did not take, tried again
// in the background.
type pendingEnd struct {
	ref *turnRef
	how string
}

// Done implements [frontier.Queue]: it ends t, and its URL leaves the
// frontier. When Redis does not take the call, this process tries again in
// the background until it does, or t's lease has run out, whose URL is
// then handed out again: a duplicate, which the fleet counts.
func (f *Frontier) Done(t frontier.Turn) { f.endTurn(t, "d") }

// Requeue implements [frontier.Queue]: it ends t, and gives its URL back
// to the head of its host's queue. When Redis does not take the call, the
// URL comes back anyway when its lease runs out.
func (f *Frontier) Requeue(t frontier.Turn) { f.endTurn(t, "q") }

// endTurn ends t, a Turn of f's, once.
func (f *Frontier) endTurn(t frontier.Turn, how string) {
	ref, ok := t.Ref.(*turnRef)
	if !ok || t.Queue != frontier.Queue(f) {
		return
	}
	f.end(ref, how)
}

// end ends the turn of ref, once: how is d done, r refused, q requeued or
// g given back uncounted. A call that Redis does not take is tried again
// in the background.
func (f *Frontier) end(ref *turnRef, how string) {
	if ref.ended.Swap(true) {
		return
	}
	f.keep.drop(ref)
	if !f.endNow(ref, how) {
		f.endLater(ref, how)
	}
}

// endNow makes the call that ends ref's turn, bounded by the timeout, and
// reports whether Redis took it.
func (f *Frontier) endNow(ref *turnRef, how string) bool {
	pacing, hash, queue, _ := f.hostKeys(ref.key)
	set, counts, tag := f.shardOf(ref.key)
	ctx, cancel := context.WithTimeout(context.Background(), f.o.timeout)
	defer cancel()
	r, err := f.run(ctx, f.scripts.end, []string{pacing, hash, queue, set, counts},
		f.argv(ref.key, ref.id, how, ref.policy), nil)
	if err != nil {
		return false
	}
	f.news(tag, tailOf(r))
	return true
}

// endLater tries the end of ref's turn again in the background, every
// second, until Redis takes it or the lease has run out.
func (f *Frontier) endLater(ref *turnRef, how string) {
	f.endMu.Lock()
	defer f.endMu.Unlock()
	f.ends = append(f.ends, pendingEnd{ref, how})
	if !f.ending {
		f.ending = true
		go f.endAll()
	}
}

// endAll is endLater's goroutine.
func (f *Frontier) endAll() {
	t := time.NewTimer(f.o.probe)
	defer t.Stop()
	for {
		<-t.C
		f.endMu.Lock()
		batch := f.ends
		f.ends = nil
		f.endMu.Unlock()
		var left []pendingEnd
		for _, e := range batch {
			if time.Now().UnixNano() < e.ref.until.Load() && !f.endNow(e.ref, e.how) {
				left = append(left, e)
			}
		}
		f.endMu.Lock()
		f.ends = append(f.ends, left...)
		if len(f.ends) == 0 {
			f.ending = false
			f.endMu.Unlock()
			return
		}
		f.endMu.Unlock()
		t.Reset(f.o.probe)
	}
}

// renewAll renews the leases of the turns of batch, in one pipeline to
// each server. A turn whose lease had run out is not brought back: its URL
// may be out again, in another process.
func (f *Frontier) renewAll(batch []*turnRef) {
	ctx, cancel := context.WithTimeout(context.Background(), f.o.timeout)
	defer cancel()
	calls := make([]*call, 0, len(batch))
	hs := make([]*health, 0, len(batch))
	for _, ref := range batch {
		_, hash, _, _ := f.hostKeys(ref.key)
		set, _, _ := f.shardOf(ref.key)
		h := f.servers.of(ctx, hash)
		calls = append(calls, &call{script: f.scripts.renew, keys: []string{hash, set}, args: f.argv(ref.key, ref.id), server: h.node})
		hs = append(hs, h)
	}
	sent := time.Now()
	runAll(ctx, f.client, calls)
	for i, c := range calls {
		r, err := c.cmd.Slice()
		if err != nil {
			if !isReply(err) {
				hs[i].failed(err)
			}
			continue
		}
		hs[i].answered()
		if len(r) > 0 && r[0] == int64(1) {
			batch[i].until.Store(sent.Add(f.o.turnLease).UnixNano())
		}
	}
}

// Close stops what the Frontier runs in the background: the renewal of
// the turns still out, whose leases then run out and whose URLs are handed
// out again, and the alarm of the Next calls that wait. Ends of turns that
// Redis has not taken yet are still tried until their leases run out. A
// Frontier must not be used after Close.
func (f *Frontier) Close() error {
	f.keep.close()
	f.gate.stop()
	return nil
}
