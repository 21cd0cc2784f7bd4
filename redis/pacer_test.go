package politeredis

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/politetest"
	"github.com/redis/go-redis/v9"
)

// closingPacer closes the client that a test made inside a synctest bubble
// along with its Pacer, and keeps the Pacer's optional interfaces.
type closingPacer struct {
	*pacer
	c *redis.Client
}

func (p closingPacer) Close() error { return p.c.Close() }

var prefixes atomic.Int64

// freshPrefix returns a key prefix no other test uses, so that each test
// starts with no state.
func freshPrefix() string { return fmt.Sprintf("t%d", prefixes.Add(1)) }

func TestConformance(t *testing.T) {
	newClient(t) // skips without a server
	politetest.RunPacer(t, func(ps polite.Policies) polite.Pacer {
		// Made inside the case's bubble, so that the client's timers and
		// channels belong to it.
		c := redis.NewClient(clientOptions(sock))
		p := NewPacer(c, WithClock(time.Now), WithKeyPrefix(freshPrefix()), FailWhenUnreachable())(ps)
		return closingPacer{p.(*pacer), c}
	})
}
