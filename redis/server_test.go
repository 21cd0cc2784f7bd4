package politeredis

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// The tests run against a redis-server of their own, on a unix socket with
// no TCP port, started by TestMain and stopped by its process id. Without
// redis-server they skip, unless the environment has CI=true: then the run
// fails, so that a CI without the server cannot pass silently.

// serverCPUsEnv, when set, names the CPUs the test server runs on
// (taskset -c syntax), so that a benchmark run on the others (GOMAXPROCS=1
// taskset -c 0 ./redis.test ..., the server on 1) measures what a
// primary with a CPU of its own takes.
const serverCPUsEnv = "POLITEREDIS_SERVER_CPUS"

var (
	sock       string // the server's socket; "" when there is none
	skipReason string
	server     *exec.Cmd
)

// quiet is a go-redis logger that drops go-redis's own messages: the
// outage tests make it report failed dials by the dozen.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func TestMain(m *testing.M) {
	redis.SetLogger(quiet{})
	if os.Getenv(fleetEnv) != "" { // a process of TestFleet's fleet
		os.Exit(fleetChild())
	}
	if os.Getenv(crashEnv) != "" { // the process that TestCrashedProcess kills
		os.Exit(crashChild())
	}
	if os.Getenv(benchEnv) != "" { // a process of BenchmarkAcquireReleaseProcesses
		os.Exit(benchChild())
	}
	if os.Getenv(frontierCrashEnv) != "" { // the process that TestFrontierCrashedProcess kills
		os.Exit(frontierCrashChild())
	}
	dir, err := os.MkdirTemp("", "politeredis")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	code := func() int {
		defer os.RemoveAll(dir)
		if err := startServer(filepath.Join(dir, "redis.sock")); err != nil {
			if os.Getenv("CI") == "true" {
				fmt.Fprintln(os.Stderr, "politeredis: CI=true and no redis-server:", err)
				return 1
			}
			skipReason = err.Error()
		}
		defer stopServer()
		return m.Run()
	}()
	os.Exit(code)
}

// startServer starts redis-server on socket path and waits for its PING.
func startServer(path string) error {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, "--port", "0", "--unixsocket", path, "--unixsocketperm", "700",
		"--save", "", "--appendonly", "no")
	if cpus := os.Getenv(serverCPUsEnv); cpus != "" { // a benchmark's server with CPUs of its own
		cmd = exec.Command("taskset", append([]string{"-c", cpus}, cmd.Args...)...)
	}
	cmd.SysProcAttr = serverProcAttr() // a test binary that panics takes its server with it
	if err := cmd.Start(); err != nil {
		return err
	}
	server = cmd
	c := redis.NewClient(clientOptions(path))
	defer c.Close()
	for range 500 {
		if c.Ping(context.Background()).Err() == nil {
			sock = path
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	stopServer()
	return fmt.Errorf("redis-server on %s did not answer PING", path)
}

// stopServer stops the server by its process id and waits for it.
func stopServer() {
	if server != nil {
		server.Process.Kill()
		server.Wait()
		server = nil
	}
}

// restartServer starts the server again on the same socket.
func restartServer(t *testing.T) {
	t.Helper()
	path := sock
	os.Remove(path)
	if err := startServer(path); err != nil {
		t.Fatal(err)
	}
}

// clientOptions are the options of a test client on socket path: nothing
// that talks to the server unasked.
func clientOptions(path string) *redis.Options {
	return &redis.Options{
		Network:                  "unix",
		Addr:                     path,
		Protocol:                 2,
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	}
}

// newClient returns a client of the test server, closed when t ends, or
// skips t when there is no server.
func newClient(t testing.TB) *redis.Client {
	t.Helper()
	if sock == "" {
		t.Skip("no redis-server:", skipReason)
	}
	c := redis.NewClient(clientOptions(sock))
	t.Cleanup(func() { c.Close() })
	return c
}
