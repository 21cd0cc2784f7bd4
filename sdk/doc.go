// Package politesdk holds the recipes for putting a [polite.PoliteTransport]
// under an API client that someone else wrote: an SDK, or a retrying HTTP
// client. Each recipe is an Example of this package, tested against a
// local fake of the service; the few helpers they need are here, and
// import no SDK.
//
// Every recipe follows four rules:
//
//   - The polite transport goes under the client's own retries, as its
//     HTTP client's transport, so that each try is paced and backed off by
//     the server's signals. The gap between two tries is then the longer of
//     the SDK's backoff and polite's pause, never their sum: with
//     [polite.APIDefaults] polite's own pause after a 5xx starts at 50ms,
//     below the SDKs' first backoff, and the server's Retry-After is both's
//     floor.
//   - A retry policy stops on polite's refusals ([Refused]): an error that
//     matches [polite.ErrRobotsBlocked] never reached the server and would
//     be refused again, and a [*pace.DeadlineError] says the request's
//     own context ends before its host allows a start, which no retry
//     within that context can change.
//   - APIDefaults, not a crawler's policy: an API host is not a crawl
//     target, and an SDK sets its own concurrency.
//   - One transport for the program, shared by every client, with
//     [polite.WithQuotaPartition] when it calls with several credentials:
//     the quota one token spends then holds none of another's calls.
//
// # The SDKs
//
// These were tried, each against a fake of its service
// (github_test.go, s3_test.go, openai_test.go):
//
//   - google/go-github v89 (Example_github): v92 needs Go 1.26, the module
//     proxy serves no v90 or v91, and this module keeps the repository's Go
//     1.25 floor. Partition by [GitHubPartition]: the token and the resource
//     GitHub counts the call against (search, code_search, graphql, core),
//     so that an exhausted search quota holds no core call. Put
//     [GitHubSecondaryLimits] under the polite transport: GitHub's
//     secondary limit comes as a 403 or 429, with a Retry-After that polite
//     honours whatever the status, with X-RateLimit-Remaining 0 that holds
//     until the reset, or with neither, when GitHub asks for a minute and
//     GitHubSecondaryLimits adds the Retry-After. go-github does not retry;
//     it holds a client that saw a limit itself, and polite holds every
//     client of the transport.
//   - aws-sdk-go-v2, service/s3 v1.114.9 (Example_s3). Its retryer asks an
//     error RetryableError before it counts a timeout as retryable, and
//     polite's refusals answer false: the operation ends at once with
//     polite's error inside, and no retry token is spent. It does not read
//     Retry-After, and polite does; it reads X-Amz-Retry-After, and polite
//     does not.
//   - openai-go v3.74.0 (Example_openai), the newest that allows Go 1.25.
//     APIDefaults reads OpenAI's x-ratelimit-*-requests and -tokens fields
//     and retry-after-ms. openai-go retries every error that comes without
//     a response and lets nothing outside it mark one final, so the
//     middleware [OpenAIStopOnRefusal] hands it polite's refusals with a
//     stand-in response that says "X-Should-Retry: false".
//
// # Signatures and waits
//
// A request signed before it waits reaches the server as old as its wait;
// SigV4 refuses one signed more than 15 minutes before, and polite may
// hold a host for up to an hour (an exhausted quota's reset, a
// Retry-After). aws-sdk-go-v2 signs each attempt inside its retry loop,
// above its HTTP client: a retry is signed afresh, but as the attempt
// leaves the SDK, before polite's wait, not after it. The S3 recipe
// inserts waitBeforeSigning (in Example_s3) before the SDK's "Signing"
// step: it waits until [polite.PoliteTransport.Ready] says the host's turn
// has come, so that the signature is made when the request can go. Give
// each operation a context deadline shorter than 15 minutes too: a hold
// longer than that then fails at once with a *pace.DeadlineError instead
// of waiting (TestS3Signing shows each case). go-github and openai-go send bearer tokens,
// which do not age: their calls may wait as long as their contexts allow.
package politesdk
