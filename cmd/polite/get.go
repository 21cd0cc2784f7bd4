package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/cmd/polite/internal/human"
)

func runGet(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var c commonFlags
	fs := newFlagSet("get", stderr, &c)
	fail := fs.Bool("f", false, "fail on an HTTP error (status 400 or more): write no body and exit with 22")
	out := fs.String("o", "", "write the bodies to `FILE` instead of stdout")
	if status := parseFlags(fs, args); status >= 0 {
		return status
	}
	tr, err := newTransport(&wireRecorder{base: http.DefaultTransport}, c.options())
	if err != nil {
		return valueError(fs, "%v", err)
	}
	rawURLs, err := urlArgs(fs)
	if err != nil {
		return usageError(fs, "%v", err)
	}
	urls, err := parseURLs(rawURLs)
	if err != nil {
		return valueError(fs, "%v", err)
	}

	body := stdout
	var file *os.File
	if *out != "" && *out != "-" {
		if file, err = os.Create(*out); err != nil {
			fmt.Fprintf(stderr, "polite get: %v\n", err)
			return exitError
		}
		body = file
	}

	client := &http.Client{Transport: tr}
	status := exitOK
	fetched := 0
	for _, u := range urls {
		s := getOne(ctx, client, u, body, stderr, *fail)
		if s == exitInterrupted {
			break
		}
		status = worse(status, s)
		fetched++
	}
	if file != nil {
		if err := file.Close(); err != nil {
			fmt.Fprintf(stderr, "polite get: %v\n", err)
			status = exitError
		}
	}
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "polite get: interrupted; URLs not fetched: %d of %d\n", len(urls)-fetched, len(urls))
		return exitInterrupted
	}
	return status
}

// getOne fetches u, copies its body to w and reports it on stderr. With
// fail, an HTTP error status is reported and its body not written. It
// returns the exit status the fetch calls for: exitInterrupted when ctx
// ended before it was done.
func getOne(ctx context.Context, client *http.Client, u *url.URL, w, stderr io.Writer, fail bool) int {
	if ctx.Err() != nil {
		return exitInterrupted
	}
	m := new(waitMeter)
	req, err := http.NewRequestWithContext(withWaitMeter(ctx, m), http.MethodGet, u.String(), nil)
	if err != nil {
		fmt.Fprintf(stderr, "error    %s  %v\n", u, err)
		return exitError
	}
	resp, err := client.Do(req)
	waited, latency, sent := m.result()
	if err != nil && ctx.Err() != nil {
		fmt.Fprintf(stderr, "stopped  %s  interrupted\n", u)
		return exitInterrupted
	}
	if err != nil {
		var blocked *polite.RobotsBlockedError
		if errors.As(err, &blocked) {
			fmt.Fprintf(stderr, "blocked  %s  %s (%s)\n", u, blocked.RobotsURL, robotsRule(blocked))
			return exitBlocked
		}
		fmt.Fprintf(stderr, "error    %s  %v\n", u, unwrapURLError(err))
		return exitError
	}
	defer resp.Body.Close()
	if !sent { // cannot happen: a response came from the wire
		waited, latency = 0, 0
	}
	via := ""
	if final := resp.Request.URL.String(); final != u.String() {
		via = "  → " + final
	}
	if fail && resp.StatusCode >= 400 {
		fmt.Fprintf(stderr, "%-8d %s  waited %s, answered in %s, HTTP error: body not written%s\n", resp.StatusCode, u, human.Duration(waited), human.Duration(latency), via)
		return exitHTTP
	}
	n, err := io.Copy(w, resp.Body)
	if err != nil && ctx.Err() != nil {
		fmt.Fprintf(stderr, "stopped  %s  interrupted after %d bytes of its body\n", u, n)
		return exitInterrupted
	}
	if err != nil {
		fmt.Fprintf(stderr, "error    %s  %d, reading the body: %v\n", u, resp.StatusCode, err)
		return exitError
	}
	fmt.Fprintf(stderr, "%-8d %s  waited %s, answered in %s, %d bytes%s\n", resp.StatusCode, u, human.Duration(waited), human.Duration(latency), n, via)
	return exitOK
}

// unwrapURLError drops the "Get \"URL\": " that http.Client puts in front of
// a transport's error, since the line already names the URL.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
