// Package politesdk holds the recipes for putting a [polite.PoliteTransport]
// under an API client that someone else wrote: an SDK, or a retrying HTTP
// client. It has no code of its own; each recipe is an Example of this
// package, tested against a local server.
//
// Every recipe follows three rules:
//
//   - The polite transport goes under the client's own retries, so that
//     each try is paced and backed off by the server's signals.
//   - A retry policy stops on polite's refusals: an error that matches
//     [polite.ErrRobotsBlocked] never reached the server and would be
//     refused again, and a [*polite.DeadlineError] says the request's own
//     context ends before its host allows a start, which no retry within
//     that context can change.
//   - APIDefaults, not a crawler's policy: an API host is not a crawl
//     target.
package politesdk
