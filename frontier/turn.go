package frontier

import "context"

// A Queue is a crawler's frontier: the seam between its workers and where
// its URLs wait. [Frontier] keeps them in one process's memory; a Queue
// that a fleet of processes shares, such as the Frontier of package
// politeredis, keeps them in a store, with the same contract, so that a
// crawler written against Queue moves from one process to a fleet by the
// line that makes it. The contract:
//
//   - URLs wait in a queue per pacing key, first in first out.
//   - Next hands out only a URL whose host can take a request now, and at
//     most one URL of a host at a time, from Next to the end of its Turn.
//   - A URL that robots.txt refuses is dropped, and reported to
//     Options.Refused, before it takes a worker's turn.
//   - Add refuses a URL past Options.MaxURLs or Options.MaxHostURLs with
//     [ErrFull] or [ErrHostFull], keeping what is queued.
//   - Next returns [ErrEmpty] when the Queue holds no URL, queued or out,
//     and none is being added; it waits for a host, within its context,
//     otherwise.
//
// politetest.RunQueue holds a Queue to this contract.
type Queue interface {
	// Add queues rawURL at the tail of its pacing key's queue and reports
	// whether it did: see [Frontier.Add].
	Add(ctx context.Context, rawURL string) (bool, error)
	// Next returns the next URL of a host that can take a request now, in
	// a Turn that the caller ends by Done or Requeue: see [Frontier.Next].
	Next(ctx context.Context) (Turn, error)
	// Done ends t: its URL leaves the Queue. Ending a Turn that has ended
	// does nothing.
	Done(t Turn)
	// Requeue ends t and gives its URL back to the head of its host's
	// queue, to be handed out again when the host is next ready.
	Requeue(t Turn)
}

// A Turn is a URL that a [Queue] handed out, and its host's turn: the host
// has no other URL out until the Turn ends, by Done or Requeue. Ending a
// Turn a second time does nothing.
type Turn struct {
	// URL is the URL to fetch, as it was added.
	URL string

	// Queue is the Queue that handed the Turn out, which Done and Requeue
	// end it with. Ref and Seq are that Queue's own, to know the turn by:
	// a Queue other than Frontier sets all three in the Turns it makes.
	Queue Queue
	Ref   any
	Seq   int64
}

// Done ends the turn: the URL leaves its Queue, and its host is looked at
// again, its state having changed. Add the links found at the URL before
// Done, so that a Next call waiting on an otherwise empty Queue does not
// return [ErrEmpty] first.
func (t Turn) Done() {
	if t.Queue != nil {
		t.Queue.Done(t)
	}
}

// Requeue ends the turn and gives the URL back to the head of its host's
// queue, to be handed out again when the host is next ready: after a 429
// or a 503, whose backoff the transport keeps, or a fetch cut short. The
// Seen hook is not asked again.
func (t Turn) Requeue() {
	if t.Queue != nil {
		t.Queue.Requeue(t)
	}
}
