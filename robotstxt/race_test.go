//go:build race

package robotstxt

// raceEnabled reports that the tests run under the race detector, which
// slows the heap's measures tenfold.
const raceEnabled = true
