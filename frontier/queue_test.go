package frontier

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestURLQueue checks that a queue gives back what was pushed, in order,
// whether or not a URL starts with the queue's prefix, across the
// compactions of its slice.
func TestURLQueue(t *testing.T) {
	tests := []struct {
		name string
		urls func(i int) string
	}{
		{"one origin", func(i int) string { return fmt.Sprintf("http://a.example/p/%d", i) }},
		{"two origins", func(i int) string {
			if i%3 == 0 {
				return fmt.Sprintf("https://a.example/p/%d", i)
			}
			return fmt.Sprintf("http://a.example/p/%d", i)
		}},
		{"a longer host after the prefix", func(i int) string { return fmt.Sprintf("http://a.example.org/%d", i) }},
		{"long URLs", func(i int) string { return "http://a.example/" + strings.Repeat("x", 200+i%300) }},
		{"no path", func(i int) string { return "http://a.example" }},
		{"query only", func(i int) string { return fmt.Sprintf("http://a.example?q=%d", i) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var q urlQueue
			var model []string
			rng := rand.New(rand.NewPCG(1, 2))
			next := 0
			for range 5000 {
				if len(model) == 0 || rng.IntN(3) > 0 {
					s := tt.urls(next)
					next++
					q.push(s)
					model = append(model, s)
					continue
				}
				if got := q.head(); got != model[0] {
					t.Fatalf("head = %q; want %q", got, model[0])
				}
				q.pop()
				model = model[1:]
				if q.n != len(model) {
					t.Fatalf("n = %d; want %d", q.n, len(model))
				}
			}
			for len(model) > 0 {
				if got := q.head(); got != model[0] {
					t.Fatalf("draining: head = %q; want %q", got, model[0])
				}
				q.pop()
				model = model[1:]
			}
			if q.n != 0 || q.off != 0 || len(q.buf) != 0 {
				t.Errorf("empty queue: n=%d off=%d len=%d; want 0s", q.n, q.off, len(q.buf))
			}
		})
	}
}

// TestURLQueueCompacts checks that a queue that is pushed and popped in
// turn for ever keeps a slice of bounded size.
func TestURLQueueCompacts(t *testing.T) {
	var q urlQueue
	for i := range 10 {
		q.push(fmt.Sprintf("http://a.example/p/%d", i))
	}
	for i := 10; i < 100_000; i++ {
		q.push(fmt.Sprintf("http://a.example/p/%d", i))
		q.pop()
	}
	if c := cap(q.buf); c > 1024 {
		t.Errorf("cap = %d after 100,000 pushes and pops of a 10-URL queue; want at most 1 KiB", c)
	}
}

func TestOriginPrefix(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"http://a.example/x", "http://a.example"},
		{"https://a.example:8443/x?y", "https://a.example:8443"},
		{"http://a.example?q", "http://a.example"},
		{"http://a.example#f", "http://a.example"},
		{"http://a.example", "http://a.example"},
		{"mailto:x", ""},
	} {
		if got := originPrefix(tt.in); got != tt.want {
			t.Errorf("originPrefix(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}
