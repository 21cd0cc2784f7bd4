package politeredis

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// A batcher runs the script calls of many goroutines in pipelines: one
// write and one read of the socket for all the calls that queued while
// the previous pipeline ran. It starts no goroutine and waits for nothing
// to fill a batch: a caller that finds no pipeline on its way sends the
// queue at once, its own call in it, and a call that finds one queues, and
// is sent when that one ends. Under light load each batch is one call.
// Letting two or four pipelines run at once made no difference that
// BenchmarkAcquireRelease could measure, but more round trips.
type batcher struct {
	client  redis.UniversalClient
	timeout time.Duration // bounds each call, from when it queues

	mu      sync.Mutex // guards the fields below
	queue   []*call
	sending bool // a pipeline is on its way
}

// A call is one script run that a batcher sends.
type call struct {
	script *redis.Script
	keys   []string
	args   []any

	until time.Time     // when its caller stops waiting for it
	wake  chan struct{} // receives when cmd is set, or when the call must lead
	batch []*call       // set, under the batcher's mu, when the call must send it
	cmd   *redis.Cmd
}

// run runs script on keys with args, in a pipeline with the other calls
// that queue meanwhile, and returns its reply.
func (b *batcher) run(script *redis.Script, keys []string, args []any) *redis.Cmd {
	c := &call{script: script, keys: keys, args: args, until: time.Now().Add(b.timeout),
		wake: make(chan struct{}, 1)}
	b.mu.Lock()
	b.queue = append(b.queue, c)
	batch := []*call(nil)
	if !b.sending {
		b.sending = true
		batch, b.queue = b.queue, nil
	}
	b.mu.Unlock()
	if batch == nil {
		<-c.wake
		batch = c.batch // set before the wake, if the call must lead
	}
	if batch != nil {
		b.flush(batch)
	}
	return c.cmd
}

// flush sends batch, as the caller of its first call, hands the calls that
// queued meanwhile to the first of them to send, and wakes the callers of
// the other calls of batch.
func (b *batcher) flush(batch []*call) {
	b.send(batch)
	b.mu.Lock()
	if len(b.queue) > 0 {
		next := b.queue[0]
		next.batch, b.queue = b.queue, nil
		next.wake <- struct{}{}
	} else {
		b.sending = false
	}
	b.mu.Unlock()
	for _, c := range batch[1:] {
		c.wake <- struct{}{}
	}
}

// send runs the calls of batch in one pipeline and sets their replies. The
// calls that find the server without their script are sent again by EVAL,
// which loads it, in a second pipeline. The pipelines end when the caller
// that queued first stops waiting, so that no call waits longer than the
// batcher's timeout from when it queued.
func (b *batcher) send(batch []*call) {
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
	pipe := b.client.Pipeline()
	for _, c := range batch {
		c.cmd = c.script.EvalSha(ctx, pipe, c.keys, c.args...)
	}
	if _, err := pipe.Exec(ctx); err == nil {
		return
	}
	for _, c := range batch {
		if redis.HasErrorPrefix(c.cmd.Err(), "NOSCRIPT") {
			c.cmd = c.script.Eval(ctx, pipe, c.keys, c.args...)
		}
	}
	if pipe.Len() > 0 {
		pipe.Exec(ctx)
	}
}
