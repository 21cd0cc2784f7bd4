package robotstxt

import (
	"errors"
	"net/http"
	"testing"
)

func TestHeaderUsage(t *testing.T) {
	tests := []struct {
		hdr  http.Header
		want string
		bad  bool
	}{
		{http.Header{"Content-Usage": {"train-ai=n"}}, "train-ai=n", false},
		{http.Header{"Content-Usage": {"train-ai=y", "search=n"}}, "train-ai=y, search=n", false},
		{http.Header{"Content-Usage": {"train-ai=y", "train-ai=n"}}, "train-ai=n", false}, // lines joined: the last counts
		{http.Header{"Content-Usage": {"train-ai=y"}, "Content-Signal": {"ai-train=no"}}, "train-ai=n", false},
		{http.Header{"Content-Usage": {"TRAIN-AI=n"}, "Content-Signal": {"search=no"}}, "search=n", true},
		{http.Header{}, "", false},
	}
	for _, tc := range tests {
		got, err := HeaderUsage(tc.hdr)
		if got.String() != tc.want || (err != nil) != tc.bad || tc.bad && !errors.Is(err, ErrBadUsage) {
			t.Errorf("HeaderUsage(%v) = %q, %v; want %q, error %v", tc.hdr, got, err, tc.want, tc.bad)
		}
	}
}
