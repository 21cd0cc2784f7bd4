package politetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/polite-go/polite"
)

// RunRobotsStore checks a RobotsStore against every case, each a subtest
// named for the behaviour it checks. newFleet is called once a case and
// returns a function that makes a store as one more process of a fleet
// would: the stores it makes share one state, which no other case sees.
//
// The cases run on the real clock, since a store shared by processes
// keeps time elsewhere; none waits for a copy to expire, and none depends
// on how long a step takes.
func RunRobotsStore(t *testing.T, newFleet func(t *testing.T) func() polite.RobotsStore) {
	for _, c := range robotsCases {
		t.Run(c.name, func(t *testing.T) {
			join := newFleet(t)
			c.run(t, join)
		})
	}
}

var robotsCases = []struct {
	name string
	run  func(t *testing.T, join func() polite.RobotsStore)
}{
	{"fetches once for all who wait", fetchesOnce},
	{"keeps what fetch returns", keepsFetch},
	{"serves a fresh copy", servesFresh},
	{"fetches an expired copy again", fetchesExpired},
	{"waiters give up with their context", waitersGiveUp},
	{"the fetcher's context does not end the fetch", fetcherCancels},
	{"origins are independent", originsIndependent},
}

// origins counts the origins made, so that each is new.
var origins atomic.Int64

// origin returns an origin that no other case or run uses.
func origin(t *testing.T) string {
	return fmt.Sprintf("https://%d-%d.%s.example:443", time.Now().UnixNano(), origins.Add(1), sanitize(t.Name()))
}

// sanitize makes a test's name a DNS label.
func sanitize(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			b[i] = '-'
		}
	}
	return string(b)
}

// file returns a copy of a fetch that lives for d, with a body that holds
// every byte value.
func file(o string, d time.Duration) *polite.RobotsFetch {
	body := []byte("User-agent: *\nDisallow: /private/\n")
	for c := range 256 {
		body = append(body, byte(c))
	}
	now := time.Now()
	return &polite.RobotsFetch{URL: o + "/robots.txt", Status: 200, FetchedAt: now, Duration: 42 * time.Millisecond,
		Body: body, ETag: `"v1"`, LastModified: "Mon, 23 Nov 2026 06:00:00 GMT", Expires: now.Add(d)}
}

// load calls s.Load with a fetch that fails the test.
func load(t *testing.T, s polite.RobotsStore, o string) *polite.RobotsFetch {
	t.Helper()
	f, err := s.Load(context.Background(), o, func(context.Context, *polite.RobotsFetch) *polite.RobotsFetch {
		t.Errorf("Load(%s) fetched; want the stored copy", o)
		return file(o, time.Hour)
	})
	if err != nil {
		t.Fatalf("Load(%s) = %v", o, err)
	}
	return f
}

// fetchesOnce: many callers on many stores of one fleet, all asking while
// the fetch runs, make one fetch and all get its result.
func fetchesOnce(t *testing.T, join func() polite.RobotsStore) {
	o := origin(t)
	want := file(o, time.Hour)
	var fetches atomic.Int32
	started, release := make(chan struct{}), make(chan struct{})
	fetch := func(ctx context.Context, prev *polite.RobotsFetch) *polite.RobotsFetch {
		if fetches.Add(1) == 1 {
			close(started)
		}
		<-release
		return want
	}
	const stores, callers = 4, 8
	var asked, done sync.WaitGroup
	got := make([]*polite.RobotsFetch, stores*callers)
	errs := make([]error, len(got))
	for i := range stores {
		s := join()
		for j := range callers {
			asked.Add(1)
			done.Add(1)
			go func() {
				defer done.Done()
				asked.Done()
				got[i*callers+j], errs[i*callers+j] = s.Load(context.Background(), o, fetch)
			}()
		}
	}
	asked.Wait()
	<-started
	close(release)
	done.Wait()
	if n := fetches.Load(); n != 1 {
		t.Errorf("%d callers made %d fetches; want 1", len(got), n)
	}
	for i, f := range got {
		if errs[i] != nil {
			t.Errorf("caller %d: Load = %v", i, errs[i])
		} else if !bytes.Equal(f.Body, want.Body) {
			t.Errorf("caller %d: body %q; want %q", i, f.Body, want.Body)
		}
	}
}

// keepsFetch: every field of what fetch returned comes back to another
// store of the fleet, a nil Body and an empty one both as they were, and
// Err as its text at least.
func keepsFetch(t *testing.T, join func() polite.RobotsStore) {
	empty := file(origin(t), time.Hour)
	empty.Body = []byte{}
	none := file(origin(t), time.Hour)
	none.Body, none.Status, none.Err, none.ETag, none.LastModified = nil, 0, errors.New("dial tcp: connection refused"), "", ""
	stale := file(origin(t), time.Hour)
	stale.Status, stale.Err, stale.Stale = 503, errors.New("503 Service Unavailable"), true
	for _, want := range []*polite.RobotsFetch{file(origin(t), time.Hour), empty, none, stale} {
		o := want.URL[:len(want.URL)-len("/robots.txt")]
		if _, err := join().Load(context.Background(), o, func(context.Context, *polite.RobotsFetch) *polite.RobotsFetch { return want }); err != nil {
			t.Fatalf("Load(%s) = %v", o, err)
		}
		got := load(t, join(), o)
		if got.URL != want.URL || got.Status != want.Status || !bytes.Equal(got.Body, want.Body) ||
			(got.Body == nil) != (want.Body == nil) || errText(got.Err) != errText(want.Err) || got.Stale != want.Stale ||
			got.ETag != want.ETag || got.LastModified != want.LastModified || got.Duration != want.Duration ||
			!got.FetchedAt.Equal(want.FetchedAt.Truncate(time.Microsecond)) && !got.FetchedAt.Equal(want.FetchedAt) {
			t.Errorf("kept\n%+v\nwant\n%+v", got, want)
		}
		// Expires reads on this process's clock: within a second of
		// what was asked, however long the round trip took.
		if d := got.Expires.Sub(want.Expires); d < -time.Second || d > time.Second {
			t.Errorf("%s: expires %v from what was asked; want within 1s", o, d)
		}
	}
}

// servesFresh: a copy that has not expired is served to every store of the
// fleet without a fetch.
func servesFresh(t *testing.T, join func() polite.RobotsStore) {
	o := origin(t)
	want := file(o, time.Hour)
	if _, err := join().Load(context.Background(), o, func(context.Context, *polite.RobotsFetch) *polite.RobotsFetch { return want }); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if got := load(t, join(), o); !bytes.Equal(got.Body, want.Body) {
			t.Errorf("body %q; want %q", got.Body, want.Body)
		}
	}
}

// fetchesExpired: a copy that has expired is fetched again, and the fetch
// is given it as prev, to revalidate or keep; each caller gets the result
// of the fetch it waited for, even one that is already expired.
func fetchesExpired(t *testing.T, join func() polite.RobotsStore) {
	o := origin(t)
	first := file(o, -time.Second)
	got, err := join().Load(context.Background(), o, func(_ context.Context, prev *polite.RobotsFetch) *polite.RobotsFetch {
		if prev != nil {
			t.Errorf("first fetch given a prev, ETag %q; want nil", prev.ETag)
		}
		return first
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.ETag != first.ETag {
		t.Errorf("Load gave ETag %q; want the fetch's, %q, though it is expired", got.ETag, first.ETag)
	}
	second := file(o, time.Hour)
	second.ETag = `"v2"`
	fetched := false
	got, err = join().Load(context.Background(), o, func(_ context.Context, prev *polite.RobotsFetch) *polite.RobotsFetch {
		fetched = true
		if prev == nil || prev.ETag != first.ETag || !bytes.Equal(prev.Body, first.Body) {
			t.Errorf("second fetch given prev %v; want the expired copy", prev != nil)
		}
		return second
	})
	if err != nil {
		t.Fatal(err)
	}
	if !fetched || got.ETag != second.ETag {
		t.Errorf("fetched %v, ETag %q; want a fetch and %q", fetched, got.ETag, second.ETag)
	}
}

// waitersGiveUp: a caller waiting for another's fetch returns its
// context's error when its context ends, and the fetch's result is kept
// for those who come after.
func waitersGiveUp(t *testing.T, join func() polite.RobotsStore) {
	o := origin(t)
	want := file(o, time.Hour)
	started, release, fetched := make(chan struct{}), make(chan struct{}), make(chan error)
	go func() {
		_, err := join().Load(context.Background(), o, func(context.Context, *polite.RobotsFetch) *polite.RobotsFetch {
			close(started)
			<-release
			return want
		})
		fetched <- err
	}()
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	waiter := make(chan error)
	var again atomic.Int32
	go func() {
		_, err := join().Load(ctx, o, func(context.Context, *polite.RobotsFetch) *polite.RobotsFetch {
			again.Add(1)
			return want
		})
		waiter <- err
	}()
	cancel()
	if err := <-waiter; !errors.Is(err, context.Canceled) {
		t.Errorf("waiter's Load = %v; want context.Canceled", err)
	}
	close(release)
	if err := <-fetched; err != nil {
		t.Errorf("fetcher's Load = %v", err)
	}
	if n := again.Load(); n != 0 {
		t.Errorf("the waiter fetched too, while the first fetch ran")
	}
	if got := load(t, join(), o); !bytes.Equal(got.Body, want.Body) {
		t.Errorf("body %q; want %q", got.Body, want.Body)
	}
}

// fetcherCancels: the caller whose fetch runs may give up too; the fetch
// goes on, on a context that is not cancelled, and the others get its
// result.
func fetcherCancels(t *testing.T, join func() polite.RobotsStore) {
	o := origin(t)
	want := file(o, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	started, release, fetchErr := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	gaveUp := make(chan error)
	go func() {
		_, err := join().Load(ctx, o, func(ctx context.Context, _ *polite.RobotsFetch) *polite.RobotsFetch {
			close(started)
			<-release
			fetchErr <- ctx.Err()
			return want
		})
		gaveUp <- err
	}()
	<-started
	waiter := make(chan *polite.RobotsFetch)
	var again atomic.Int32
	go func() {
		f, err := join().Load(context.Background(), o, func(context.Context, *polite.RobotsFetch) *polite.RobotsFetch {
			again.Add(1)
			return want
		})
		if err != nil {
			t.Errorf("waiter's Load = %v", err)
		}
		waiter <- f
	}()
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Errorf("fetcher's Load = %v; want context.Canceled", err)
	}
	close(release)
	if err := <-fetchErr; err != nil {
		t.Errorf("the fetch's context ended with its caller's: %v", err)
	}
	if f := <-waiter; f == nil || !bytes.Equal(f.Body, want.Body) {
		t.Errorf("waiter got %+v; want the fetch's result", f)
	}
	if n := again.Load(); n != 0 {
		t.Errorf("the waiter fetched too, while the first fetch ran")
	}
}

// originsIndependent: while one origin's fetch runs, another's is loaded.
func originsIndependent(t *testing.T, join func() polite.RobotsStore) {
	a, b := origin(t), origin(t)
	started, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		join().Load(context.Background(), a, func(context.Context, *polite.RobotsFetch) *polite.RobotsFetch {
			close(started)
			<-release
			return file(a, time.Hour)
		})
	}()
	<-started
	want := file(b, time.Hour)
	got, err := join().Load(context.Background(), b, func(context.Context, *polite.RobotsFetch) *polite.RobotsFetch { return want })
	if err != nil || got.URL != want.URL {
		t.Errorf("Load(%s) while %s is fetched = %+v, %v; want its own copy", b, a, got, err)
	}
	close(release)
	<-done
}

// errText returns err's text, or "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
