package politeredis

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// health tracks whether a Redis server answers, for one Pacer or
// RobotsStore: the one server of a client that is not a Cluster, or one
// primary of a Cluster. It says once when an outage starts and once when
// it ends, and spaces the probes made during one.
type health struct {
	logger   *slog.Logger
	probe    time.Duration // the least time between two probes in an outage
	node     string        // the primary's address, for the log; "" for a client that is not a Cluster
	fallback string        // what the process does in an outage, for the log
	resumed  string        // what it does again when Redis answers, likewise
	down     func()        // nil, or called at every failure: a Cluster's reload of its slot map
	up       func()        // nil, or called when an outage ends

	isDown    atomic.Bool        // the server is unreachable
	mu        sync.Mutex         // guards lastProbe, over and end
	lastProbe time.Time          // when the last call to the server was made in an outage
	over      context.Context    // ends when the outage ends; nil until outage asks for it
	end       context.CancelFunc // ends over
	dials     *dials             // how the client's dials went; nil: unknown
}

// dials holds how the last dial of a client went, as watchDials sees it:
// nil before any, a nil err after one that succeeded, or since Redis last
// answered.
type dials struct{ last atomic.Pointer[dialResult] }

// dialResult is how a dial went: its error, nil when it succeeded.
type dialResult struct{ err error }

// dialOK is the dialResult of a dial that succeeded.
var dialOK = &dialResult{}

// skip reports whether a caller should not try the server: it is down,
// and was tried less than a probe interval ago. Otherwise, in an outage,
// the caller is the probe.
func (h *health) skip() bool {
	if !h.isDown.Load() {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if now := time.Now(); now.Sub(h.lastProbe) >= h.probe {
		h.lastProbe = now
		return false
	}
	return true
}

// failed records that a call to the server failed with err, and says so
// at the start of an outage.
func (h *health) failed(err error) {
	h.mu.Lock()
	h.lastProbe = time.Now()
	h.mu.Unlock()
	if h.down != nil {
		h.down()
	}
	if !h.isDown.Swap(true) && h.logger != nil {
		h.logger.Warn("politeredis: redis unreachable; "+h.fallback+" until it answers", h.attrs("err", h.cause(err))...)
	}
}

// answered records that the server answered, and says so at the end of
// an outage. A dial that failed before is no longer the cause of anything.
func (h *health) answered() {
	if h.dials != nil {
		if d := h.dials.last.Load(); d != nil && d.err != nil {
			h.dials.last.CompareAndSwap(d, dialOK)
		}
	}
	if h.isDown.Load() && h.isDown.Swap(false) {
		h.mu.Lock()
		if h.end != nil {
			h.end()
			h.over, h.end = nil, nil
		}
		h.mu.Unlock()
		if h.logger != nil {
			h.logger.Info("politeredis: redis answers again; "+h.resumed, h.attrs()...)
		}
		if h.up != nil {
			h.up()
		}
	}
}

// outage returns a context that ends when the server's outage ends: one
// that has ended when the server is up.
func (h *health) outage() context.Context {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.isDown.Load() {
		return endedContext
	}
	if h.over == nil {
		h.over, h.end = context.WithCancel(context.Background())
	}
	return h.over
}

// endedContext is a context that has ended.
var endedContext = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// attrs returns the attributes of a log line: the node's address, when
// there is one, then kv.
func (h *health) attrs(kv ...any) []any {
	if h.node == "" {
		return kv
	}
	return append([]any{"node", h.node}, kv...)
}

// servers tracks the health of the servers behind a client: one for a
// client that is not a Cluster; for a Cluster, one for each primary, which
// it finds by the slot of a key, so that an outage of one primary moves
// only its keys to memory. A failure makes a Cluster client reload its
// slot map: go-redis reloads it by itself only after a MOVED, ASK or
// READONLY reply, or once it is a minute old, so that after a failover the
// promoted replica's slots would keep going to the dead address.
type servers struct {
	cluster *redis.ClusterClient // nil for a client that is not a Cluster
	one     *health              // the server of a client that is not a Cluster
	newNode func(node string) *health
	nodes   sync.Map // a Cluster primary's address → *health
}

// newServers returns the servers behind client; newHealth makes the
// health of each, named by its address ("" for a client that is not a
// Cluster).
func newServers(client redis.UniversalClient, newHealth func(node string) *health) *servers {
	s := &servers{newNode: newHealth}
	if c, ok := client.(*redis.ClusterClient); ok {
		s.cluster = c
	} else {
		s.one = newHealth("")
	}
	return s
}

// of returns the health of the server that holds the Redis key rkey.
func (s *servers) of(ctx context.Context, rkey string) *health {
	if s.cluster == nil {
		return s.one
	}
	node := ""
	if c, err := s.cluster.MasterForKey(ctx, rkey); err == nil {
		node = c.Options().Addr
	}
	if h, ok := s.nodes.Load(node); ok {
		return h.(*health)
	}
	h := s.newNode(node)
	h.down = reloader(s.cluster)
	v, _ := s.nodes.LoadOrStore(node, h)
	return v.(*health)
}

// each calls f on the health of every server known.
func (s *servers) each(f func(*health)) {
	if s.cluster == nil {
		f(s.one)
		return
	}
	s.nodes.Range(func(_, v any) bool {
		f(v.(*health))
		return true
	})
}

// anyDown reports whether a server is known to be down.
func (s *servers) anyDown() bool {
	down := false
	s.each(func(h *health) { down = down || h.isDown.Load() })
	return down
}

// isCluster reports whether client is a Cluster client.
func isCluster(client redis.UniversalClient) bool {
	_, ok := client.(*redis.ClusterClient)
	return ok
}

// reloader returns a function that makes client reload its slot map when
// it is a Cluster client, or nil.
func reloader(client redis.UniversalClient) func() {
	if c, ok := client.(*redis.ClusterClient); ok {
		return func() { c.ReloadState(context.Background()) }
	}
	return nil
}

// ended returns why ctx has ended, or nil: ctx.Err(), or
// context.DeadlineExceeded once its deadline has passed by the clock,
// which on a busy machine comes before the timer that ends ctx fires.
func ended(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return nil
}

// fairTry reports whether a call sent at sent, which its request's
// context cut short, gave the server time to answer: a tenth of the
// Pacer's timeout. Only then does it count against the server; a call cut
// sooner, as one sent a moment before its request's deadline, tells
// nothing of the server, and the lease it may have taken is given back
// by a call bounded by the timeout alone, which judges the server.
func (p *pacer) fairTry(sent time.Time) bool {
	return time.Since(sent) >= p.o.timeout/10
}

// isReply reports whether err is a reply of the server (an error the
// script or the command raised, which ran and changed nothing) rather
// than a failure to reach it.
func isReply(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && !errors.Is(err, context.DeadlineExceeded)
}

// cause returns err with what the client's dials tell of it, when err says
// only that the call's context ended: go-redis retries a dial that fails
// until then, and returns the context's error alone. It adds the last
// dial's error when that dial failed, or that a connection was made and
// Redis did not answer in time when it succeeded. When no dial was seen, as
// for a Cluster's nodes made before the Pacer or store, it can tell
// nothing more, and returns err.
func (h *health) cause(err error) error {
	if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) || h.dials == nil {
		return err
	}
	switch d := h.dials.last.Load(); {
	case d == nil:
		return err
	case d.err != nil:
		return fmt.Errorf("%w; the last dial failed: %w", err, d.err)
	}
	return fmt.Errorf("%w; connected, but redis did not answer in time", err)
}

// watchDials returns the dials of client, which it watches. A Cluster or
// Ring client dials through a client per node, so it watches the nodes the
// client makes from now on.
func watchDials(client redis.UniversalClient) *dials {
	d := &dials{}
	if c, ok := client.(interface{ OnNewNode(func(*redis.Client)) }); ok {
		c.OnNewNode(func(node *redis.Client) { node.AddHook(dialWatch{d}) })
		return d
	}
	client.AddHook(dialWatch{d})
	return d
}

// dialWatch is a go-redis hook that records how each dial went, and passes
// every call on untouched.
type dialWatch struct{ d *dials }

func (w dialWatch) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := next(ctx, network, addr)
		if err != nil {
			w.d.last.Store(&dialResult{err})
		} else {
			w.d.last.Store(dialOK)
		}
		return conn, err
	}
}

func (dialWatch) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (dialWatch) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
