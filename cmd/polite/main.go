package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
)

// Exit statuses.
const (
	exitOK      = 0  // every URL allowed; a crawl fetched a URL given; the demo's verdict holds
	exitBlocked = 1  // robots.txt blocked a URL, or every URL given to crawl; the demo's verdict failed
	exitError   = 2  // a usage or network error
	exitHTTP    = 22 // get -f: an HTTP error status, as curl -f exits

	// exitInterrupted is the status of a command that SIGINT or SIGTERM
	// stopped: 128 and SIGINT's number, as a shell reports a command that
	// SIGINT ended.
	exitInterrupted = 130
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

// A command is a subcommand of polite, as doc.go's Usage and sections give
// it; a test holds them equal.
type command struct {
	name     string
	synopses []string // its forms, flags and arguments; "\n" continues a line
	summary  string   // the first sentence of its section of doc.go
}

var commands = []command{
	{"check", []string{"[-ua UA] [-delay D] [-use USES] [-robots FILE] URL..."},
		"Check tests URLs against their site's robots.txt."},
	{"get", []string{"[-ua UA] [-delay D] [-f] [-o FILE] URL..."},
		"Get fetches URLs in turn, following redirects, and writes their bodies."},
	{"crawl", []string{"[-ua UA] [-delay D] [-max-pages N] [-max-depth N] [-concurrency N]\n" +
		"[-same-host] [-sitemaps] [-idle-timeout T] [-retries N] [-timeline FILE.svg] URL..."},
		"Crawl follows links from the URLs, through the transport."},
	{"demo", []string{"[-fast] [-timeline FILE.svg] [-v]", "-serve [-port N]"},
		"Demo crawls an embedded web of three hosts and checks that the crawl was polite."},
	{"audit", []string{"-robots [DATE=]FILE... [-format text|json|csv] [-fail-on TOKEN] [-timeline DIR]\n" +
		"[-use TOKEN=USES] [-retry-after D] [-one-host] [-fields NAME=KEY,...] [LOG...]"},
		"Audit checks the crawlers of access logs against the site's robots.txt."},
}

// synopsis returns the usage lines of the named commands, or of every
// command when none is named, each line after indent, with the forms lined
// up after the widest command name.
func synopsis(indent string, names ...string) string {
	var cmds []command
	for _, c := range commands {
		if len(names) == 0 || slices.Contains(names, c.name) {
			cmds = append(cmds, c)
		}
	}
	width := 0
	for _, c := range cmds {
		width = max(width, len(c.name))
	}
	var b strings.Builder
	for _, c := range cmds {
		for _, form := range c.synopses {
			head := fmt.Sprintf("polite %-*s ", width, c.name)
			form = strings.ReplaceAll(form, "\n", "\n"+indent+strings.Repeat(" ", len(head)))
			fmt.Fprintf(&b, "%s%s%s\n", indent, head, form)
		}
	}
	return b.String()
}

// manual is where the command's manual is: doc.go.
const manual = "go doc github.com/polite-go/polite/cmd/polite"

// exitStatus is the first paragraph of doc.go's Exit status.
const exitStatus = `The check and get commands exit with 0 when every URL was allowed, 1
when robots.txt blocked any, and 2 on a usage or network error: for
check, also a robots.txt that could not be fetched. With -f, get exits
with 22 when a URL answered with a status of 400 or more. Crawl exits
with 0 when it fetched a URL it was given, whatever the answer and
whatever it met after it. When it fetched none, it exits with 1 if
robots.txt refused them all, and with 2 otherwise: a request that got
no response, or a stop before any answer. It also exits with 2 on a
usage error, or when its output or -timeline file cannot be written.
The demo exits with 1 when its verdict fails. Audit exits with 1 when a crawler that
-fail-on names broke a rule, and with 2 when a log or a robots.txt
cannot be read. A command that SIGINT (Ctrl-C) or SIGTERM stops exits
with 130, once it has reported what it did.`

// usage is the text of polite -h.
var usage = "Polite is a robots.txt tester, a polite curl, a small crawler, a demo,\nand an auditor of access logs.\n\n" +
	"Usage:\n\n" + synopsis("\t") + "\n" +
	"Exit status:\n\n" + exitStatus + "\n\n" +
	"Run 'polite <command> -h' for a command's flags, and\n'" + manual + "' for the manual.\n"

func main() {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	ctx, stop := interruptible(context.Background(), sigs, os.Exit)
	status := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(status)
}

// run runs the command line args (without the program name) and returns
// the exit status. When ctx ends, as the first interrupt ends it, the
// command stops, reports what it did, and returns exitInterrupted.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitError
	}
	cmd, args := args[0], args[1:]
	switch cmd {
	case "check":
		return runCheck(ctx, args, stdout, stderr)
	case "get":
		return runGet(ctx, args, stdout, stderr)
	case "crawl":
		return runCrawl(ctx, args, stdout, stderr)
	case "demo":
		return runDemo(ctx, args, stdout, stderr)
	case "audit":
		return runAudit(ctx, args, stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	fmt.Fprintf(stderr, "polite: unknown command %q\n\n%s", cmd, usage)
	return exitError
}
