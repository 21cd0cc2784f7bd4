package politeredis

import (
	"net/http"
	"testing"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/frontier"
	"github.com/polite-go/polite/politetest"
	"github.com/redis/go-redis/v9"
)

// closingFrontier closes the client that a test made inside a synctest
// bubble along with its Frontier.
type closingFrontier struct {
	*Frontier
	c redis.UniversalClient
}

func (f closingFrontier) Close() error {
	f.Frontier.Close()
	return f.c.Close()
}

// testFrontier returns a Frontier on client, and the transport it fetches
// through, paced by a Pacer on the same client and key prefix; both read
// the time from the time package, for synctest bubbles.
func testFrontier(client redis.UniversalClient, prefix string, base http.RoundTripper, opts []polite.Option, o frontier.Options, fopts ...FrontierOption) (*Frontier, *polite.PoliteTransport) {
	tr := polite.New(base, append(opts, polite.WithPacer(NewPacer(client, WithClock(time.Now), WithKeyPrefix(prefix), FailWhenUnreachable())))...)
	f := NewFrontier(client, tr, o, append([]FrontierOption{WithKeyPrefix(prefix)}, fopts...)...)
	f.o.clock = time.Now
	return f, tr
}

// TestFrontierConformance holds the Frontier on one server to the
// contract of package frontier's own.
func TestFrontierConformance(t *testing.T) {
	newClient(t) // skips without a server
	politetest.RunQueue(t, func(base http.RoundTripper, opts []polite.Option, o frontier.Options) (frontier.Queue, *polite.PoliteTransport) {
		// Made inside the case's bubble, so that the client's timers and
		// channels belong to it.
		c := redis.NewClient(clientOptions(sock))
		f, tr := testFrontier(c, freshPrefix(), base, opts, o)
		return closingFrontier{f, c}, tr
	})
}

// TestFrontierClusterConformance holds the Frontier on a Cluster of three
// primaries to the same contract: its hosts in shards of their slots, and
// the shards in the top's schedule.
func TestFrontierClusterConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	addrs := startCluster(t)
	politetest.RunQueue(t, func(base http.RoundTripper, opts []polite.Option, o frontier.Options) (frontier.Queue, *polite.PoliteTransport) {
		c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, Protocol: 2, DisableIdentity: true})
		f, tr := testFrontier(c, freshPrefix(), base, opts, o)
		return closingFrontier{f, settledCluster{c}}, tr
	})
}

// settledCluster is a Cluster client whose Close waits, in the bubble, for
// the reload of its slot map that go-redis starts on a goroutine of its
// own after a call that its context cut short, which sleeps 200ms first.
type settledCluster struct{ *redis.ClusterClient }

func (c settledCluster) Close() error {
	err := c.ClusterClient.Close()
	time.Sleep(time.Second)
	return err
}
