package polite

import "time"

// A RobotsResult is how the fetch of an origin's robots.txt whose result is
// in force went. [RobotsStats], [Decision] and [RobotsFetch] carry one.
type RobotsResult struct {
	URL       string        // as fetched: "https://example.com/robots.txt"
	Status    int           // HTTP status of the fetch in force; 0 when no response came
	Err       error         // why the last fetch failed; nil when it reached the file
	Stale     bool          // Err is set and an earlier good copy is in force
	FetchedAt time.Time     // when the fetch ended
	Duration  time.Duration // how long it took, redirects and waits included
}

// result returns how the fetch that gave r went.
func (r *robotsRecord) result() RobotsResult {
	return RobotsResult{URL: r.url, Status: r.status, Err: r.err, Stale: r.stale, FetchedAt: r.fetchedAt, Duration: r.duration}
}
