// Command bench measures package polite where the in-package benchmarks
// cannot: against a local site on loopback, on the wall clock, and side by
// side with gocolly/colly. It is a module of its own, so that colly never
// enters the library's go.mod.
//
//	go run . loopback   # requests per second, polite over bare http.Transport
//	go run . pacing     # start-to-start gaps to one host against the pace
//	go run . colly      # polite, colly, and colly over polite (politecolly.NewCollector) crawling the same site
//	go run . crawl      # the share of the politeness limit of a frontier, a plain worker pool, colly, and politecolly.Crawl
//
// Each subcommand's -h lists its flags. BENCH_CPUPROFILE=file writes a CPU
// profile of the run. BENCHMARKS.md in the parent directory records the
// figures and the commands that made them.
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	cmds := map[string]func([]string) error{
		"serve":    func([]string) error { return serveSite() }, // the site, in a child process
		"loopback": loopback,
		"pacing":   pacing,
		"colly":    versusColly,
		"crawl":    crawlLimit,
	}
	if len(args) == 0 || cmds[args[0]] == nil {
		fmt.Fprintln(os.Stderr, "usage: bench loopback|pacing|colly|crawl [flags]")
		return 2
	}
	if args[0] != "serve" {
		fmt.Printf("%s, GOMAXPROCS %d, %d CPUs\n", runtime.Version(), runtime.GOMAXPROCS(0), runtime.NumCPU())
		if path := os.Getenv("BENCH_CPUPROFILE"); path != "" {
			stop, err := profile(path)
			if err != nil {
				fmt.Fprintln(os.Stderr, "bench:", err)
				return 1
			}
			defer stop()
		}
	}
	if err := cmds[args[0]](args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	return 0
}

// profile writes a CPU profile to path until stop is called.
func profile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
