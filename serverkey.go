package polite

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"
)

// This file is the pacing key by server IP address: a cache of host names'
// addresses, filled within the requests' contexts, and the dial that sends
// a request's connection to the address its key names.

// A Resolver looks up the IP addresses of a host name. [*net.Resolver] is
// one; tests give a fake. It must be safe for concurrent use.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// resolveTTL is how long the IP pacing key keeps a host name's address
// before it looks it up again: 5 minutes, a common DNS record TTL. A
// lookup that failed is tried again after 30 seconds.
const resolveTTL = 5 * time.Minute

// resolveRetry is how long a failed lookup is remembered, so that the
// requests to a host that does not resolve do not each ask the resolver.
const resolveRetry = 30 * time.Second

// WithPacingKeyIP paces requests by the IP address of their server, so
// that the sites of one server, whatever their names, share one pace (a
// crawler of many small sites on a shared host wants this). The key is the
// address in the form [netip.Addr.String] gives it, "203.0.113.7" or
// "2001:db8::7"; a URL whose host is an IP address is keyed by it without
// a lookup.
//
// r looks the host names up (nil: [net.DefaultResolver]), within the
// request's context. An address is kept for 5 minutes, a common DNS record TTL, and then looked
// up again, with requests that need it meanwhile waiting for the one
// lookup; when the new answer still holds the address in force, it stays,
// so that a round-robin name keeps one key. Of several addresses the
// first the resolver returns is taken. A lookup that fails fails the
// request with a [*ResolveError], and is remembered for 30 seconds.
// [Limits].MaxResolved bounds the names kept.
//
// The connection goes to the address the key names: the transport puts
// it in the context of the request it hands the base, and [DialResolved]
// dials it. New(nil, WithPacingKeyIP(r)) builds its base that way, from
// [http.DefaultTransport]; a program that gives its own base, or a
// [WithRobotsTransport], must set its DialContext to DialResolved(its
// dial), or its connections may go to another address of the name. A connection kept alive from before a
// name's address changed may still carry requests to that name, paced by
// the new key; and through a proxy, the proxy dials.
//
// It and [WithPacingKey] make one setting: the later replaces the earlier.
func WithPacingKeyIP(r Resolver) Option {
	return optionFunc(func(c *config) error {
		if r == nil {
			r = net.DefaultResolver
		}
		c.pacingKey, c.resolver = nil, r
		return nil
	})
}

// A ResolveError is the error of a request paced by [WithPacingKeyIP]
// whose host name could not be resolved. The request was not sent.
type ResolveError struct {
	// Host is the host name, in canonical form.
	Host string
	// Err is the resolver's error, or why its answer was of no use.
	Err error
}

// Error implements the error interface, for example
// "polite: no pacing key for example.com: lookup example.com: no such host".
func (e *ResolveError) Error() string {
	return "polite: no pacing key for " + e.Host + ": " + e.Err.Error()
}

// Unwrap returns Err.
func (e *ResolveError) Unwrap() error { return e.Err }

// errNoAddress is a ResolveError's Err when the resolver answered with no
// address, and errResolverPanicked when it panicked.
var (
	errNoAddress        = errors.New("the resolver returned no address")
	errResolverPanicked = errors.New("the resolver panicked")
)

// resolveCache holds the addresses of host names for the IP pacing key.
// Each name has one entry; the first request that finds none, or finds it
// expired, looks the name up and the others wait for it.
type resolveCache struct {
	r   Resolver
	max int // soft bound on the entries kept, >= 1

	mu sync.RWMutex
	m  map[string]*resolved // by canonical host name
}

// resolved is a host name's entry: a lookup under way, or its result.
type resolved struct {
	done    chan struct{} // closed when the lookup ended; the fields below are set before
	dial    *dialTarget   // the host and the address in force; nil when the lookup failed
	err     error         // why the lookup failed
	expires time.Time     // when the entry must be looked up again
}

func newResolveCache(r Resolver, max int) *resolveCache {
	return &resolveCache{r: r, max: max, m: make(map[string]*resolved)}
}

// key returns the pacing key of host, a canonical host name, and where a
// request to it must be dialled: the address in the cache, or the one a
// lookup within ctx finds. The dial target is nil for a host that is an
// address, which is its own key. key fails with a *ResolveError when the
// lookup fails, or with ctx's error when ctx ends first.
func (c *resolveCache) key(ctx context.Context, host string) (string, *dialTarget, error) {
	if _, ok := addrOf(host); ok {
		return host, nil, nil
	}
	c.mu.RLock()
	e := c.m[host]
	if e != nil && isDone(e.done) && e.err == nil && time.Now().Before(e.expires) {
		c.mu.RUnlock()
		return e.dial.key, e.dial, nil // the common case
	}
	c.mu.RUnlock()
	for {
		c.mu.Lock()
		e = c.m[host]
		lead := e == nil || isDone(e.done) && !time.Now().Before(e.expires)
		if lead {
			prev := e
			e = &resolved{done: make(chan struct{})}
			c.insert(host, e)
			c.mu.Unlock()
			c.lookup(ctx, host, e, prev)
		} else {
			c.mu.Unlock()
			select {
			case <-e.done:
			case <-ctx.Done():
				return "", nil, ctx.Err()
			}
		}
		if e.err == nil {
			return e.dial.key, e.dial, nil
		}
		if !isContextErr(e.err) {
			return "", nil, &ResolveError{Host: host, Err: e.err}
		}
		// The context of the request that looked up ended; ours may not have.
		if err := ctx.Err(); err != nil {
			return "", nil, err
		}
	}
}

// lookup resolves host into e, whose lookup the caller leads, and ends it.
// prev is the entry e replaces, if any: when its address is still among
// the answers, it stays the one in force. A lookup that ended with its
// context, or whose resolver panicked, leaves no entry, so that the next
// request looks up again; those waiting for it are let go either way.
func (c *resolveCache) lookup(ctx context.Context, host string, e, prev *resolved) {
	e.err = errResolverPanicked // until the resolver returns
	defer func() {
		c.mu.Lock()
		if (isContextErr(e.err) || e.err == errResolverPanicked) && c.m[host] == e {
			delete(c.m, host)
		}
		close(e.done)
		c.mu.Unlock()
	}()
	addrs, err := c.r.LookupNetIP(ctx, "ip", host)
	now := time.Now()
	switch {
	case err == nil && len(addrs) == 0:
		err = errNoAddress
	case err == nil:
		addr := addrs[0].Unmap()
		if prev != nil && prev.dial != nil {
			for _, a := range addrs {
				if a.Unmap() == prev.dial.addr {
					addr = prev.dial.addr
				}
			}
		}
		e.dial, e.expires = &dialTarget{host: host, addr: addr, key: addr.String()}, now.Add(resolveTTL)
	}
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			err = ctxErr
		}
		e.expires = now.Add(resolveRetry)
	}
	e.err = err
}

// peek returns the pacing key in the cache for host, without a lookup, and
// whether there is one.
func (c *resolveCache) peek(host string) (string, bool) {
	if _, ok := addrOf(host); ok {
		return host, true
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if e := c.m[host]; e != nil && isDone(e.done) && e.err == nil {
		return e.dial.key, true
	}
	return "", false
}

// insert puts e in the cache as host's entry. When the cache is full it
// first drops the entries that have expired, then others at random, down
// to seven eighths of its bound, so that inserts into a full cache cost
// O(1) each on average; lookups under way stay. c.mu must be held.
func (c *resolveCache) insert(host string, e *resolved) {
	if _, ok := c.m[host]; !ok && len(c.m) >= c.max {
		now := time.Now()
		for h, old := range c.m {
			if isDone(old.done) && !now.Before(old.expires) {
				delete(c.m, h)
			}
		}
		for h, old := range c.m {
			if len(c.m) <= c.max*7/8 {
				break
			}
			if isDone(old.done) {
				delete(c.m, h)
			}
		}
	}
	c.m[host] = e
}

// addrOf returns the address that host, a canonical host, is, if it is
// one.
func addrOf(host string) (netip.Addr, bool) {
	if !mayBeIP(host) {
		return netip.Addr{}, false // spares a name the parse's error
	}
	ip, err := netip.ParseAddr(host)
	return ip, err == nil
}

func isDone(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// dialTarget is what the transport puts in the context of a request whose
// key is its server's address, for DialResolved: the host name, canonical,
// the address its key names, and the key.
type dialTarget struct {
	host string
	addr netip.Addr
	key  string // addr.String()
}

type dialTargetKey struct{}

// withDialTarget returns ctx carrying tg for DialResolved.
func withDialTarget(ctx context.Context, tg *dialTarget) context.Context {
	return context.WithValue(ctx, dialTargetKey{}, tg)
}

// dialTargetOf returns the dial target ctx carries, or nil.
func dialTargetOf(ctx context.Context) *dialTarget {
	tg, _ := ctx.Value(dialTargetKey{}).(*dialTarget)
	return tg
}

// keepDialTarget returns ctx carrying the dial target of from, if any.
func keepDialTarget(ctx, from context.Context) context.Context {
	if tg := dialTargetOf(from); tg != nil {
		return withDialTarget(ctx, tg)
	}
	return ctx
}

// sentKey returns the pacing key of req, a request the transport sends
// itself: with the IP key, the one its dial target carries, as it was
// chosen before the request waited for its turn.
func (t *PoliteTransport) sentKey(req *http.Request) string {
	if tg := dialTargetOf(req.Context()); tg != nil && t.ips != nil {
		return tg.key
	}
	return t.PacingKey(req.URL)
}

// DialResolved returns a dial function for an [http.Transport]'s
// DialContext that sends the connections of requests paced by
// [WithPacingKeyIP] to the address their key names: when the context
// carries the address the transport chose for the host being dialled, it
// dials that address, at the port asked for; otherwise, as for a proxy's
// address, it dials as asked. The name still goes in TLS's server name and
// in the Host header. dial does the dialling (nil: a [net.Dialer] with
// [http.DefaultTransport]'s timeout and keep-alive, 30s each).
func DialResolved(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if dial == nil {
		d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
		dial = d.DialContext
	}
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		if tg := dialTargetOf(ctx); tg != nil {
			if host, port, err := net.SplitHostPort(address); err == nil {
				if h, _ := canonicalHost(host); h == tg.host {
					address = net.JoinHostPort(tg.addr.String(), port)
				}
			}
		}
		return dial(ctx, network, address)
	}
}

// ipBase returns the base of a transport built with no base and the IP
// pacing key: [http.DefaultTransport]'s clone, dialling by DialResolved.
// A DefaultTransport that a program replaced by another kind of
// RoundTripper is used as it is.
func ipBase() http.RoundTripper {
	dt, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return http.DefaultTransport
	}
	t := dt.Clone()
	t.DialContext = DialResolved(t.DialContext)
	return t
}
