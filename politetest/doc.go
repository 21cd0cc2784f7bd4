// Package politetest checks that the stores a fleet plugs into package
// polite keep its promises: [RunPacer] holds a [pace.Pacer] to the delay
// policy's table, the same cases that the transport's own in-memory Pacer
// passes, and [RunRobotsStore] holds a [polite.RobotsStore] to the
// behaviours the transport relies on, such as fetching each origin's
// robots.txt once for all who share it; [RunQueue] holds a
// [frontier.Queue] to the contract that package frontier's own Frontier
// keeps, so that a crawler's frontier shared by a fleet hands out what
// the one in memory would.
//
// RunPacer and RunQueue run each case in a [testing/synctest] bubble, so
// the Pacer or Queue under test must read the time with the time package
// and wait with its timers. A Pacer that keeps its clock elsewhere, such
// as a server's, must offer its tests a way to read the bubble's instead.
// A Pacer or Queue
// made for a case is closed at its end when it has a Close method, so
// that it leaves no goroutine in the bubble.
package politetest
