package audit

import "testing"

// TestSampled checks that a sample keeps events spread evenly over all it
// was given, within its limit and the budget.
func TestSampled(t *testing.T) {
	tests := []struct {
		name   string
		n      int
		limit  int
		budget int
		want   int   // events kept
		stride int64 // one in stride kept
	}{
		{"under the limit", 10, 2000, timelineTotal, 10, 1},
		{"at the limit", 2000, 2000, timelineTotal, 2000, 1},
		{"one past it", 2001, 2000, timelineTotal, 1001, 2},
		{"far past it", 10_000, 2000, timelineTotal, 1250, 8},
		{"the budget binds", 1000, 2000, 100, 63, 16},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &timelineBudget{left: tt.budget}
			s := sampled{budget: b, limit: tt.limit, stride: 1}
			for i := range tt.n {
				s.add(timelineEvent{start: int64(i)})
			}
			if len(s.events) != tt.want || s.stride != tt.stride {
				t.Errorf("%d events kept, one in %d; want %d, one in %d", len(s.events), s.stride, tt.want, tt.stride)
			}
			for i, e := range s.events {
				if e.start != int64(i)*s.stride {
					t.Fatalf("event %d is the %dth given; want the %dth", i, e.start, int64(i)*s.stride)
				}
			}
			if b.left != tt.budget-len(s.events) {
				t.Errorf("budget left %d; want %d", b.left, tt.budget-len(s.events))
			}
		})
	}
}
