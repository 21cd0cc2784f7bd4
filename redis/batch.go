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
// others ran. It waits for nothing to fill a batch. Each server has its
// own lane: a caller that finds fewer than maxSending calls or pipelines
// to its call's server on their way sends its call at once, alone,
// bounded by its context as a call made without a batcher; otherwise its
// call queues in the server's lane, and when one of those ends, its
// caller or goroutine starts a goroutine that sends the lane's queue,
// again and again until it is empty. Under light load no call queues and
// no goroutine starts. A call never waits for a call to another server,
// nor goes in a pipeline with one: a server that does not answer holds up
// its own calls alone, and their failure is not counted against another.
//
// A caller that queued stops waiting when its context ends: its call then
// leaves the queue if it has not been sent, and its orphan function is
// called with nil; if it has, its orphan function is called with its
// reply. A detached batcher, for a Cluster client, sends a call that goes
// alone on a goroutine too, so that its caller stops waiting likewise: a
// Cluster client holds a call past its context while it looks up the
// server's commands, under a lock and a context of its own of 5s, which
// it does again at every call until a look-up succeeds. It costs the
// caller a goroutine's hand-off per call: about 50µs a call in
// BenchmarkAcquireReleaseLatency on a loaded 2-core machine, which is
// why a batcher for another client does not detach.
type batcher struct {
	client  redis.UniversalClient
	timeout time.Duration // bounds each call, from when it queues
	detach  bool          // a call that goes alone is sent by a goroutine, not by its caller

	mu    sync.Mutex       // guards lanes, the fields of each, and the done and gone of calls
	lanes map[string]*lane // by server, while it has calls queued or on their way
}

// A lane is a batcher's calls to one server.
type lane struct {
	server  string
	queue   []*call
	sending int // calls or pipelines on their way
}

// within runs call, a call of go-redis bounded by ctx, on a goroutine of
// its own, and returns its reply, or ctx.Err() when ctx ends first: go-redis
// may hold a call past its context (see batcher). It is for the calls
// that are not on the hot path, which can afford the hand-off.
func within(ctx context.Context, call func(context.Context) *redis.Cmd) (*redis.Cmd, error) {
	done := make(chan *redis.Cmd, 1)
	go func() { done <- call(ctx) }()
	select {
	case cmd := <-done:
		return cmd, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
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
	server string           // the server that holds keys, as servers.of names it
	orphan func(*redis.Cmd) // nil, or called when the caller stopped waiting

	until time.Time     // when the batcher stops waiting for the reply
	wake  chan struct{} // receives when cmd is set
	cmd   *redis.Cmd
	done  bool // cmd is set
	gone  bool // the caller stopped waiting
}

// run runs script on keys, which server holds, with args, alone or in a
// pipeline with other calls to server, and returns its reply; or
// ctx.Err() when ctx ends while the call waits in the queue or is on its
// way.
func (b *batcher) run(ctx context.Context, server string, script *redis.Script, keys []string, args []any, orphan func(*redis.Cmd)) (*redis.Cmd, error) {
	b.mu.Lock()
	l := b.lanes[server]
	if l == nil {
		if b.lanes == nil {
			b.lanes = make(map[string]*lane)
		}
		l = &lane{server: server}
		b.lanes[server] = l
	}
	if l.sending < maxSending && !b.detach {
		l.sending++
		b.mu.Unlock()
		cctx, cancel := context.WithTimeout(ctx, b.timeout)
		defer cancel()
		cmd := script.Run(cctx, b.client, keys, args...)
		if next := b.next(l); next != nil {
			go b.sendAll(l, next)
		}
		return cmd, nil
	}
	c := &call{script: script, keys: keys, args: args, server: server, orphan: orphan, wake: make(chan struct{}, 1)}
	if l.sending < maxSending {
		l.sending++
		b.mu.Unlock()
		go b.sendAlone(ctx, l, c)
	} else {
		c.until = time.Now().Add(b.timeout)
		l.queue = append(l.queue, c)
		b.mu.Unlock()
	}
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
	i := slices.Index(l.queue, c)
	if i >= 0 { // not sent
		l.queue = slices.Delete(l.queue, i, i+1)
	}
	b.mu.Unlock()
	if i >= 0 && orphan != nil {
		orphan(nil)
	}
	return nil, ctx.Err()
}

// next returns the calls that queued in lane l, for the caller to send,
// or nil when none did: then the caller is no longer on its way, and its
// place among the lane's maxSending is free.
func (b *batcher) next(l *lane) []*call {
	b.mu.Lock()
	defer b.mu.Unlock()
	next := l.queue
	l.queue = nil
	if len(next) == 0 {
		next = nil
		if l.sending--; l.sending == 0 {
			delete(b.lanes, l.server)
		}
	}
	return next
}

// sendAlone sends c, a call of lane l, alone, bounded by ctx, its
// caller's, and by the batcher's timeout, then the calls that queue in l
// meanwhile, until none does.
func (b *batcher) sendAlone(ctx context.Context, l *lane, c *call) {
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	c.cmd = c.script.Run(ctx, b.client, c.keys, c.args...)
	cancel()
	b.deliver([]*call{c})
	b.sendAll(l, b.next(l))
}

// sendAll sends batch, the calls queued in lane l, then the calls that
// queue there meanwhile, until none does.
func (b *batcher) sendAll(l *lane, batch []*call) {
	for batch != nil {
		b.pipeline(batch)
		b.deliver(batch)
		batch = b.next(l)
	}
}

// deliver hands the calls of batch, whose replies are set, to their
// callers, or to their orphan functions when their callers stopped
// waiting.
func (b *batcher) deliver(batch []*call) {
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
	runPipeline(ctx, b.client, batch)
}

// runAll runs calls in one pipeline to each server, the pipelines at
// once, and sets their replies. A server that does not answer holds up
// its own calls alone, and its failure is theirs alone: a Cluster
// client's pipeline waits for every node, and when it retries one node's
// calls past the context's end, sets that error on every call of the
// pipeline, answered or not.
func runAll(ctx context.Context, client redis.UniversalClient, calls []*call) {
	byServer := make(map[string][]*call)
	for _, c := range calls {
		byServer[c.server] = append(byServer[c.server], c)
	}
	if len(byServer) == 1 {
		runPipeline(ctx, client, calls)
		return
	}
	var wg sync.WaitGroup
	for _, calls := range byServer {
		wg.Go(func() { runPipeline(ctx, client, calls) })
	}
	wg.Wait()
}

// runPipeline runs calls in one pipeline and sets their replies. The calls
// that find the server without their script are sent again by EVAL, which
// loads it, in a second pipeline.
func runPipeline(ctx context.Context, client redis.UniversalClient, calls []*call) {
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
