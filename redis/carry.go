package politeredis

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/polite-go/polite/pace"
	"github.com/redis/go-redis/v9"
)

// What an outage leaves behind, and how a Pacer makes it good when the
// server answers again: leases that no release gave back (orphans), and
// starts and pauses that the process made in its memory (carries).

// abandon gives back the lease id of key in the background: at once, then
// at each probe interval while the key's server does not answer, until
// the lease has expired.
func (p *pacer) abandon(key, id string) {
	p.orphanMu.Lock()
	defer p.orphanMu.Unlock()
	p.orphans = append(p.orphans, orphan{key: key, id: id, until: time.Now().Add(p.o.lease)})
	if !p.sweeping {
		p.sweeping = true
		go p.sweep()
	}
}

// sweep gives back the orphans, again and again, until none is left.
func (p *pacer) sweep() {
	var timer *time.Timer
	for {
		p.orphanMu.Lock()
		batch := p.orphans
		p.orphans = nil
		if len(batch) == 0 {
			p.sweeping = false
			p.orphanMu.Unlock()
			return
		}
		p.orphanMu.Unlock()
		left := p.giveBack(batch)
		if len(left) == 0 {
			continue
		}
		p.orphanMu.Lock()
		p.orphans = append(p.orphans, left...)
		p.orphanMu.Unlock()
		if timer == nil {
			timer = time.NewTimer(p.o.probe)
		} else {
			timer.Reset(p.o.probe)
		}
		<-timer.C
	}
}

// giveBack runs cancelLua for each orphan of batch whose lease has not
// expired, in one pipeline to each server, and returns those that it
// could not give back.
func (p *pacer) giveBack(batch []orphan) []orphan {
	now := time.Now()
	batch = slices.DeleteFunc(batch, func(o orphan) bool { return now.After(o.until) })
	ctx, cancel := context.WithTimeout(context.Background(), p.o.timeout)
	defer cancel()
	calls := make([]*call, len(batch))
	hs := make([]*health, len(batch)) // found before the calls, which may make a Cluster reload its map
	for i, o := range batch {
		calls[i], hs[i] = p.call(ctx, p.cancel, o.key, o.id)
	}
	if len(calls) > 0 {
		runAll(ctx, p.client, calls)
	}
	var left []orphan
	for i, c := range calls {
		h := hs[i]
		if err := c.cmd.Err(); err != nil { // the server failed or refused: the script did not run
			if !p.o.failClose {
				h.failed(err)
			}
			left = append(left, batch[i])
			continue
		}
		h.answered()
		p.notify(batch[i].key)
	}
	return left
}

// call returns a call of script for key with extra arguments, for runAll,
// and the health of the server that holds key.
func (p *pacer) call(ctx context.Context, script *redis.Script, key string, extra ...string) (*call, *health) {
	keys := p.keys(key)
	h := p.servers.of(ctx, keys[0])
	return &call{script: script, keys: keys, args: p.withPolicy(key, p.argv(extra...)), server: h.node}, h
}

// withCarry returns args with what this process did for key in its
// memory, when it paced key there, and the generation of that, or 0.
func (p *pacer) withCarry(key string, args []any) ([]any, uint64) {
	p.carryMu.Lock()
	gen := p.carries[key]
	p.carryMu.Unlock()
	if gen == 0 {
		return args, 0
	}
	ago, pause := p.memory(key)
	return append(args, ago, pause), gen
}

// memory returns what this process's memory holds of key, as arguments of
// carryLua: how long ago its last start was and how long its pause has
// left, in µs, "0" for none.
func (p *pacer) memory(key string) (ago, pause string) {
	ks, err := p.fallback().Ready(context.Background(), pace.Request{Key: key})
	ago, pause = "0", "0"
	if err != nil {
		return ago, pause
	}
	now := time.Now()
	if !ks.LastStart.IsZero() {
		ago = us(max(now.Sub(ks.LastStart), time.Microsecond))
	}
	if ks.PausedUntil.After(now) {
		pause = us(ks.PausedUntil.Sub(now))
	}
	return ago, pause
}

// carried records that what this process did for key in its memory, up
// to generation gen, is in Redis.
func (p *pacer) carried(key string, gen uint64) {
	p.carryMu.Lock()
	defer p.carryMu.Unlock()
	if p.carries[key] != gen {
		return // a start since
	}
	delete(p.carries, key)
	if len(p.carries) == 0 {
		p.carrying.Store(false)
	}
}

// carryLater carries, in the background, what this process did in its
// memory for the keys whose servers answer, at most once a probe interval.
// A request carries its own key's as it is admitted; this is for the keys
// that no request of this process asks for soon, and whose next start
// another process may take.
func (p *pacer) carryLater() {
	if !p.carrying.Load() {
		return
	}
	p.carryMu.Lock()
	defer p.carryMu.Unlock()
	if now := time.Now(); now.Sub(p.carryAt) >= p.o.probe {
		p.carryAt = now
		go p.carryAll()
	}
}

// carryAll carries what this process did in its memory for every key
// whose server is not known to be down, in one pipeline to each server.
func (p *pacer) carryAll() {
	p.carryMu.Lock()
	gens := maps.Clone(p.carries)
	p.carryMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), p.o.timeout)
	defer cancel()
	var calls []*call
	var carried []string
	for key := range gens {
		ago, pause := p.memory(key)
		c, h := p.call(ctx, p.carry, key, ago, pause)
		if h.isDown.Load() {
			continue
		}
		calls = append(calls, c)
		carried = append(carried, key)
	}
	if len(calls) == 0 {
		return
	}
	runAll(ctx, p.client, calls)
	for i, c := range calls {
		if c.cmd.Err() == nil {
			p.carried(carried[i], gens[carried[i]])
		}
	}
}
