package polite

import (
	"context"
	"sync"
	"time"
)

// A RobotsStore shares robots.txt files among transports, and among the
// processes of a fleet, so that each origin's file is fetched once for all
// who share the store rather than once by each. Plug one in with
// [WithRobotsStore]; without one, each transport keeps its files to itself.
// A transport keeps its own parsed copy of what the store gives it, and
// asks the store again when that copy expires.
//
// Implementations must be safe for concurrent use. [NewMemoryRobotsStore]
// is the in-memory one; package politetest checks any other against the
// same cases.
type RobotsStore interface {
	// Load returns the store's copy of origin's robots.txt while it is
	// fresh: until its Expires. When the store has none, or its copy has
	// expired, one caller among all who share the store calls fetch, with
	// the copy it had or nil, and the store keeps what fetch returns and
	// gives it to every caller waiting for it.
	//
	// The others wait for that result as long as ctx lets them. A caller
	// whose ctx ends returns ctx's error; the fetch goes on, on a context
	// that ctx does not cancel, and its result is kept for the others.
	// When the caller that fetches is lost, as when its process dies, the
	// store lets another fetch in its place.
	//
	// Load fails only with ctx's error or when the store itself fails; an
	// error of the store should name it. origin is "scheme://host:port".
	// fetch returns a copy that is not nil, and a caller of Load must not
	// change what it is given.
	Load(ctx context.Context, origin string, fetch func(ctx context.Context, prev *RobotsFetch) *RobotsFetch) (*RobotsFetch, error)
}

// WithRobotsStore makes the transport get each origin's robots.txt
// through s, which shares it with the other transports and processes that
// use s: the store's copy while it is fresh, and a fetch, made by one of
// them for all, when it is not. The transport keeps its own parsed copy
// until the store's expires, and a file it fetches itself lives as
// [WithRobotsTTL] and the file's Cache-Control say. When s fails, requests
// fail with its error until it answers again; a store that would rather
// fall back to fetching in this process does so inside its Load. The
// transport's robots.txt events report the fetches it made itself. Nil is
// an error.
func WithRobotsStore(s RobotsStore) Option {
	return optionFunc(func(c *config) error {
		if s == nil {
			return &ConfigError{Option: "WithRobotsStore", Reason: "must not be nil"}
		}
		c.robotsStore = s
		return nil
	})
}

// A RobotsFetch is how the last fetch of an origin's robots.txt went, and
// the file in force after it: what a [RobotsStore] shares. Each transport
// parses Body itself. A file that no rule applies to is an empty Body, not
// a nil one: nil means no file (a 4xx, or a file unreachable with no
// earlier copy). A store shared by processes keeps how long a copy has
// left to live rather than the instant, so that Expires reads on each
// process's own clock, and may keep Err as its text alone.
type RobotsFetch struct {
	URL          string        // as fetched: "https://example.com/robots.txt"
	Status       int           // HTTP status of the fetch in force; 0 when no response came
	Err          error         // why the last fetch failed; nil when it reached the file
	Stale        bool          // Err is set and Body is the last copy that was reached
	FetchedAt    time.Time     // when the fetch ended
	Duration     time.Duration // how long it took, redirects and waits included
	Body         []byte        // the file in force, as read (RFC 9309 §2.5: its first 500 KiB); nil when no file applies
	ETag         string        // the file's ETag, to revalidate it with; "" when none
	LastModified string        // the file's Last-Modified, likewise
	Expires      time.Time     // when it is due to be fetched again
}

// NewMemoryRobotsStore returns a RobotsStore that keeps at most max files
// in this process's memory, a soft bound: when it is full, a new origin
// first drops the expired files and then others at random. It is for
// transports of one process that fetch the same origins, and it is the
// reference that package politetest holds other stores to.
// It panics if max is not positive.
func NewMemoryRobotsStore(max int) RobotsStore {
	if max <= 0 {
		panic("polite: NewMemoryRobotsStore: max must be > 0")
	}
	return &memoryRobotsStore{max: max, files: make(map[string]*storedRobots)}
}

// memoryRobotsStore is the RobotsStore that NewMemoryRobotsStore makes.
type memoryRobotsStore struct {
	max   int
	mu    sync.Mutex // guards files and every storedRobots' fields
	files map[string]*storedRobots
}

// storedRobots is one origin's slot in a memoryRobotsStore.
type storedRobots struct {
	f     *RobotsFetch // the copy kept; nil until the first fetch ends
	fetch *robotsCall  // the fetch under way; nil when none is
}

// A robotsCall is one fetch of a robots.txt that callers wait for.
type robotsCall struct {
	done chan struct{} // closed when the fetch ends
	f    *RobotsFetch  // what it gave; set before done closes
}

func (s *memoryRobotsStore) Load(ctx context.Context, origin string, fetch func(context.Context, *RobotsFetch) *RobotsFetch) (*RobotsFetch, error) {
	s.mu.Lock()
	e := s.files[origin]
	if e == nil {
		if len(s.files) >= s.max {
			s.dropLocked()
		}
		e = &storedRobots{}
		s.files[origin] = e
	}
	if e.f != nil && time.Now().Before(e.f.Expires) {
		f := e.f
		s.mu.Unlock()
		return f, nil
	}
	call := e.fetch
	if call == nil {
		call = &robotsCall{done: make(chan struct{})}
		e.fetch = call
		go s.run(context.WithoutCancel(ctx), e, call, fetch)
	}
	s.mu.Unlock()

	select {
	case <-call.done:
		return call.f, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// run fetches e's file for call, keeps it in e and hands it to its
// waiters.
func (s *memoryRobotsStore) run(ctx context.Context, e *storedRobots, call *robotsCall, fetch func(context.Context, *RobotsFetch) *RobotsFetch) {
	s.mu.Lock()
	prev := e.f
	s.mu.Unlock()
	f := fetch(ctx, prev)
	s.mu.Lock()
	e.f, e.fetch, call.f = f, nil, f
	s.mu.Unlock()
	close(call.done)
}

// dropLocked makes room for a quarter of the store: it drops the expired
// files, then others, in map order, which is random. Files being fetched
// stay. The caller holds mu.
func (s *memoryRobotsStore) dropLocked() {
	now := time.Now()
	for origin, e := range s.files {
		if e.fetch == nil && (e.f == nil || !now.Before(e.f.Expires)) {
			delete(s.files, origin)
		}
	}
	for origin, e := range s.files {
		if len(s.files) < s.max-s.max/4 {
			break
		}
		if e.fetch == nil {
			delete(s.files, origin)
		}
	}
}
