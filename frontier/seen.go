package frontier

import (
	"context"
	"hash/maphash"
	"sync"
)

// A SeenSet is an in-memory set of URLs, for Options.Seen. It keeps a
// 64-bit hash of each URL rather than the URL, about 16 bytes a URL: two
// URLs whose hashes collide count as one, which among n URLs befalls a new
// URL with a chance of about n in 2^64 (one in 18 billion at a billion
// URLs). It compares URLs as written: normalise them before Add if two
// spellings should count as one. The zero value is an empty set, ready to
// use; a SeenSet must not be copied after first use.
type SeenSet struct {
	mu   sync.Mutex          // guards seed and seen
	seed maphash.Seed        // set with seen
	seen map[uint64]struct{} // hashes of the URLs seen; nil until the first
}

// Seen reports whether rawURL is in the set, and adds it. It never fails;
// its signature is Options.Seen's.
func (s *SeenSet) Seen(_ context.Context, rawURL string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen == nil {
		s.seed = maphash.MakeSeed()
		s.seen = make(map[uint64]struct{})
	}
	k := maphash.String(s.seed, rawURL)
	if _, ok := s.seen[k]; ok {
		return true, nil
	}
	s.seen[k] = struct{}{}
	return false, nil
}

// Len returns the number of URLs in the set.
func (s *SeenSet) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.seen)
}
