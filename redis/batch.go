package politeredis

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// A batcher runs the script calls of many goroutines in pipelines: one
// write and one read of the socket for all the calls that queued while
// others ran. It waits for nothing to fill a batch. A caller that finds
// fewer than maxSending calls or pipelines of the batcher on their way
// sends its call at once, itself, bounded by its context as a call made
// without a batcher; otherwise its call queues, and when one of those
// ends, its caller or goroutine starts a goroutine that sends the queue,
// again and again until it is empty. Under light load no call queues and
// no goroutine starts.
//
// A caller that queued stops waiting when its context ends: its call then
// leaves the queue if it has not been sent, and its orphan function is
// called with nil; if it has, its orphan function is called with its
// reply.
type batcher struct {
	client  redis.UniversalClient
	timeout time.Duration // bounds each call, from when it queues

	mu      sync.Mutex // guards the fields below and the done and gone of calls
	queue   []*call
	sending int // calls or pipelines on their way
}

// maxSending bounds the calls or pipelines of a batcher on their way at
// once. In a loop of requests like BenchmarkAcquireRelease's, medians of
// three runs: 4 goroutines made 9.2k requests per second with one, as each
// call that queued waited for the one on its way, against 11.1k when every
// call went alone, and 14.7k with four; 16 goroutines 19.6k with one and
// 25.7k with four; 256 goroutines 36.4k and 35.5k.
const maxSending = 4

// A call is one script run that a batcher sends.
type call struct {
	script *redis.Script
	keys   []string
	args   []any
	orphan func(*redis.Cmd) // nil, or called when the caller stopped waiting

	until time.Time     // when the batcher stops waiting for the reply
	wake  chan struct{} // receives when cmd is set
	cmd   *redis.Cmd
	done  bool // cmd is set
	gone  bool // the caller stopped waiting
}

// run runs script on keys with args, alone or in a pipeline with other
// calls, and returns its reply; or ctx.Err() when ctx ends while the call
// waits in the queue or its pipeline runs.
func (b *batcher) run(ctx context.Context, script *redis.Script, keys []string, args []any, orphan func(*redis.Cmd)) (*redis.Cmd, error) {
	b.mu.Lock()
	if b.sending < maxSending {
		b.sending++
		b.mu.Unlock()
		ctx, cancel := context.WithTimeout(ctx, b.timeout)
		defer cancel()
		cmd := script.Run(ctx, b.client, keys, args...)
		if next := b.next(); next != nil {
			go b.sendAll(next)
		}
		return cmd, nil
	}
	c := &call{script: script, keys: keys, args: args, orphan: orphan,
		until: time.Now().Add(b.timeout), wake: make(chan struct{}, 1)}
	b.queue = append(b.queue, c)
	b.mu.Unlock()
	select {
	case <-c.wake:
		return c.cmd, nil
	case <-ctx.Done():
	}
	b.mu.Lock()
	if c.done {
		b.mu.Unlock()
		return c.cmd, nil
	}
	c.gone = true
	i := slices.Index(b.queue, c)
	if i >= 0 { // not sent
		b.queue = slices.Delete(b.queue, i, i+1)
	}
	b.mu.Unlock()
	if i >= 0 && orphan != nil {
		orphan(nil)
	}
	return nil, ctx.Err()
}

// next returns the calls that queued, for the caller to send, or nil when
// none did: then the caller is no longer on its way, and its place among
// the maxSending is free.
func (b *batcher) next() []*call {
	b.mu.Lock()
	defer b.mu.Unlock()
	next := b.queue
	b.queue = nil
	if len(next) == 0 {
		next = nil
		b.sending--
	}
	return next
}

// sendAll sends batch, then the calls that queue meanwhile, until none
// does.
func (b *batcher) sendAll(batch []*call) {
	for batch != nil {
		b.pipeline(batch)
		b.mu.Lock()
		for _, c := range batch {
			c.done = true
		}
		b.mu.Unlock()
		for _, c := range batch {
			switch {
			case !c.gone: // set before done, if ever
				c.wake <- struct{}{}
			case c.orphan != nil:
				c.orphan(c.cmd)
			}
		}
		batch = b.next()
	}
}

// pipeline runs the calls of batch in one pipeline and sets their replies.
// The pipelines end when the call that queued first is due, so that none
// waits longer than the batcher's timeout from when it queued.
func (b *batcher) pipeline(batch []*call) {
	until := batch[0].until
	for _, c := range batch[1:] {
		if c.until.Before(until) {
			until = c.until
		}
	}
	ctx, cancel := context.WithDeadline(context.Background(), until)
	defer cancel()
	if len(batch) == 1 {
		c := batch[0]
		c.cmd = c.script.Run(ctx, b.client, c.keys, c.args...)
		return
	}
	runAll(ctx, b.client, batch)
}

// runAll runs calls in one pipeline and sets their replies. The calls that
// find the server without their script are sent again by EVAL, which
// loads it, in a second pipeline.
func runAll(ctx context.Context, client redis.UniversalClient, calls []*call) {
	pipe := client.Pipeline()
	for _, c := range calls {
		c.cmd = c.script.EvalSha(ctx, pipe, c.keys, c.args...)
	}
	if _, err := pipe.Exec(ctx); err == nil {
		return
	}
	for _, c := range calls {
		if redis.HasErrorPrefix(c.cmd.Err(), "NOSCRIPT") {
			c.cmd = c.script.Eval(ctx, pipe, c.keys, c.args...)
		}
	}
	if pipe.Len() > 0 {
		pipe.Exec(ctx)
	}
}
