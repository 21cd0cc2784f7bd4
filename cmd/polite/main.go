// Command polite makes HTTP requests the polite way, through a
// [polite.PoliteTransport]: every request obeys the site's robots.txt
// (RFC 9309) and waits out the host's pace, which adapts to the server's
// latency and backs off on 429, 5xx and Retry-After.
//
// Usage:
//
//	polite check [-ua UA] [-delay D] [-robots FILE] URL...
//	polite get   [-ua UA] [-delay D] [-o FILE] URL...
//	polite crawl [-ua UA] [-delay D] [-max-pages N] [-max-depth D] [-concurrency C]
//	             [-same-host] [-idle-timeout T] [-retries R] [-timeline FILE.svg] URL...
//	polite demo  [-fast] [-timeline FILE.svg] [-v]
//
// check prints, for each URL, whether its site's robots.txt allows it, the
// group and rule that decided, the Crawl-delay and the pace; with -robots it
// tests a local robots.txt without touching the network. get fetches URLs
// and writes their bodies to standard output or a file, one line per request
// on standard error. crawl follows links from the given URLs and prints one
// JSON line per request, then a table per host. demo starts an embedded web
// of three hosts on loopback, crawls it and checks from what went on the
// wire that the crawl was polite.
//
// check and get exit with status 0 when every URL was allowed, 1 when
// robots.txt blocked any, and 2 on a usage or network error. demo exits
// with 1 when its verdict does not hold.
//
// The command is written only against the public API of package polite.
package main

import (
	"fmt"
	"io"
	"os"
)

// Exit statuses.
const (
	exitOK      = 0  // every URL allowed; the demo's verdict holds
	exitBlocked = 1  // robots.txt blocked a URL; the demo's verdict failed
	exitError   = 2  // a usage or network error
	exitHTTP    = 22 // get -f: an HTTP error status, as curl -f exits
)

// worse returns the graver of two exit statuses, for a command that ends
// with the gravest outcome of its URLs: an error, then an HTTP error, then
// a refusal by robots.txt.
func worse(a, b int) int {
	rank := func(status int) int {
		switch status {
		case exitOK:
			return 0
		case exitBlocked:
			return 1
		case exitHTTP:
			return 2
		}
		return 3
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}

const usage = `Usage: polite <command> [flags] [arguments]

polite makes HTTP requests the polite way: it obeys robots.txt (RFC 9309)
and paces requests per host, backing off on 429, 5xx and Retry-After.

Commands:
  check   test URLs against their site's robots.txt, or against a local file
  get     fetch URLs politely; bodies to stdout, one line per request to stderr
  crawl   crawl from URLs; one JSON line per request, a table per host at the end
  demo    crawl an embedded demo web on loopback and check that it was polite

Run 'polite <command> -h' for a command's flags.

Exit status: 0 when every URL was allowed, 1 when robots.txt blocked any
(for demo: when its verdict fails), 2 on a usage or network error.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs the command line args (without the program name) and returns
// the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitError
	}
	cmd, args := args[0], args[1:]
	switch cmd {
	case "check":
		return runCheck(args, stdout, stderr)
	case "get":
		return runGet(args, stdout, stderr)
	case "crawl":
		return runCrawl(args, stdout, stderr)
	case "demo":
		return runDemo(args, stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	fmt.Fprintf(stderr, "polite: unknown command %q\n\n%s", cmd, usage)
	return exitError
}
