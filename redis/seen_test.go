package politeredis

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// seenTrialLua runs the seen filter on the server alone, as frontierAddLua
// does: it adds ARGV[1] distinct URLs, then asks about ARGV[2] others,
// their digests made of the top octets of the outputs of a linear
// congruential generator of 2^32, whose low bits repeat soon (the
// octets of SHA-512, which the Frontier uses, are uniform too). It returns the
// URLs it found seen among the first (about as many as the false
// positives), among the others (the false positives), the filter's
// octets and its top level.
const seenTrialLua = seenLua + `
local x = 12345
local function digest()
  local o = {}
  for i = 1, 64 do
    x = (1664525 * x + 1013904223) % 4294967296
    o[i] = math.floor(x / 16777216)
  end
  return string.char(unpack(o))
end
local top, c, missed, fp = 0, 0, 0, 0
for _ = 1, tonumber(ARGV[1]) do
  local d = digest()
  if seen(KEYS[1], top, d) then
    missed = missed + 1
  else
    if c >= level(top) then top, c = top + 1, 0 end
    mark(KEYS[1], top, d)
    c = c + 1
  end
end
for _ = 1, tonumber(ARGV[2]) do
  if seen(KEYS[1], top, digest()) then fp = fp + 1 end
end
return {missed, fp, redis.call('STRLEN', KEYS[1]), top}
`

// TestSeenFilter measures the seen filter of one host of 100,000 URLs:
// its false positives, the URLs it would take for seen among 100,000
// others, stay under 1 in 1,000, and it keeps at most 5 octets a URL.
// The figures go to the log, for BENCHMARKS.md (go test -v -run
// TestSeenFilter).
func TestSeenFilter(t *testing.T) {
	newClient(t)
	opts := clientOptions(sock)
	opts.ReadTimeout = time.Minute
	c := redis.NewClient(opts)
	defer c.Close()
	key := freshPrefix() + ":seen"
	r, err := redis.NewScript(seenTrialLua).Run(context.Background(), c, []string{key}, 100_000, 100_000).Int64Slice()
	if err != nil {
		t.Fatal(err)
	}
	firstSeen, fp, octets, top := r[0], r[1], r[2], r[3]
	t.Logf("100,000 URLs: %d false positives among 100,000 others (%.5f), %d octets (%.2f a URL), %d levels",
		fp, float64(fp)/1e5, octets, float64(octets)/1e5, top+1)
	if firstSeen > 100 {
		t.Errorf("%d of 100,000 distinct URLs found seen as they were added; want at most 100, as many as false positives", firstSeen)
	}
	if fp > 100 {
		t.Errorf("%d false positives among 100,000 URLs; want at most 100 (1 in 1,000)", fp)
	}
	if per := float64(octets) / 1e5; per > 5 {
		t.Errorf("%.2f octets a URL; want at most 5", per)
	}
}
