package politeredis

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/pace"
	"github.com/redis/go-redis/v9"
)

// needBinary returns the path of a program the test needs, or skips the
// test without it; with CI=true it fails instead.
func needBinary(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %v", err)
		}
		t.Skip(err)
	}
	return p
}

// freePort returns a loopback port that nothing listens on just now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startCluster starts a Redis Cluster of three primaries on loopback ports
// and returns their addresses. It stops them, by process id, when t ends.
func startCluster(t *testing.T) []string {
	return launchCluster(t, 3, 0).addrs
}

// A cluster is a Redis Cluster that a test started.
type cluster struct {
	addrs []string             // every node's address
	procs map[string]*exec.Cmd // by address
}

// launchCluster starts a Redis Cluster of n nodes on loopback ports, with
// replicas replicas per primary and extra server arguments, and waits
// until every node says the cluster is ok and every primary has its
// replicas. It stops the nodes, by process id, when t ends.
func launchCluster(t *testing.T, n, replicas int, extra ...string) *cluster {
	server := needBinary(t, "redis-server")
	cli := needBinary(t, "redis-cli")
	cl := &cluster{procs: make(map[string]*exec.Cmd)}
	for i := range n {
		dir := t.TempDir()
		port := freePort(t)
		args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--cluster-enabled", "yes", "--cluster-config-file", dir + "/nodes.conf",
			"--dir", dir, "--save", "", "--appendonly", "no"}, extra...)
		cmd := exec.Command(server, args...)
		cmd.SysProcAttr = serverProcAttr()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		addr := "127.0.0.1:" + strconv.Itoa(port)
		c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true})
		for j := 0; c.Ping(context.Background()).Err() != nil; j++ {
			if j == 500 {
				t.Fatalf("cluster node %d on %s did not answer PING", i, addr)
			}
			time.Sleep(10 * time.Millisecond)
		}
		c.Close()
		cl.addrs = append(cl.addrs, addr)
		cl.procs[addr] = cmd
	}
	args := append([]string{"--cluster", "create"}, cl.addrs...)
	args = append(args, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	for _, addr := range cl.addrs {
		c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true})
		for j := 0; ; j++ {
			info, _ := c.ClusterInfo(context.Background()).Result()
			repl, _ := c.Info(context.Background(), "replication").Result()
			if strings.Contains(info, "cluster_state:ok") && (replicas == 0 ||
				strings.Contains(repl, "role:slave") && strings.Contains(repl, "master_link_status:up") ||
				strings.Contains(repl, "connected_slaves:"+strconv.Itoa(replicas))) {
				break
			}
			if j == 1000 {
				t.Fatalf("cluster node %s not ok:\n%s\n%s", addr, info, repl)
			}
			time.Sleep(10 * time.Millisecond)
		}
		c.Close()
	}
	return cl
}

// TestCluster paces 60 hosts through a cluster of three primaries: the
// hosts spread over the primaries, and a backoff holds on each.
func TestCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	addrs := startCluster(t)
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, Protocol: 2, DisableIdentity: true})
	defer c.Close()
	ctx := context.Background()
	policy := pace.Policy{BaseDelay: 100 * time.Millisecond, LatencyFactor: pace.None, Jitter: pace.None}
	p := NewPacer(c, FailWhenUnreachable())(pace.Config{Policy: policy})

	const hosts = 60
	for i := range hosts {
		l, err := p.Acquire(ctx, pace.Request{Key: fmt.Sprintf("host%d.example", i)})
		if err != nil {
			t.Fatal(err)
		}
		p.Release(l, pace.Outcome{Class: pace.Signal})
	}
	// A signal paused each host for the backoff base, 5s; a request with a
	// deadline sooner fails at once, whichever primary holds the host.
	for i := range hosts {
		dctx, cancel := context.WithTimeout(ctx, time.Second)
		_, err := p.Acquire(dctx, pace.Request{Key: fmt.Sprintf("host%d.example", i)})
		cancel()
		if _, ok := err.(*pace.DeadlineError); !ok {
			t.Errorf("Acquire(host%d) after a signal = %v; want a *pace.DeadlineError", i, err)
		}
	}

	var (
		mu      sync.Mutex // protects perNode; ForEachMaster runs at once on every primary
		perNode []int64
	)
	err := c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
		keys, err := n.Keys(ctx, "polite:{*}").Result()
		if err != nil {
			return err
		}
		mu.Lock()
		perNode = append(perNode, int64(len(keys)))
		mu.Unlock()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, n := range perNode {
		total += n
		if n == 0 {
			t.Errorf("hosts per primary = %v; want some on each", perNode)
		}
	}
	if total != hosts {
		t.Errorf("hosts in the cluster = %d (%v); want %d", total, perNode, hosts)
	}
	t.Logf("hosts per primary: %v", perNode)

	// The robots store: each origin's copy and claim in one slot, the
	// origins spread over the primaries, and a copy shared is served.
	store := NewRobotsStore(c, FailWhenUnreachable())
	origin := func(i int) string { return fmt.Sprintf("https://host%d.example:443", i) }
	for range 2 {
		for i := range hosts {
			f, err := store.Load(ctx, origin(i), func(context.Context, *polite.RobotsFetch) *polite.RobotsFetch {
				return copyOf(origin(i), time.Hour)
			})
			if err != nil || f.URL != origin(i)+"/robots.txt" {
				t.Fatalf("Load(%s) = %+v, %v", origin(i), f, err)
			}
		}
	}
	perNode = nil
	err = c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
		keys, err := n.Keys(ctx, "polite:robots:{*").Result()
		mu.Lock()
		perNode = append(perNode, int64(len(keys)))
		mu.Unlock()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	total = 0
	for _, n := range perNode {
		total += n
		if n == 0 {
			t.Errorf("robots.txt copies per primary = %v; want some on each", perNode)
		}
	}
	if total != hosts {
		t.Errorf("robots.txt copies in the cluster = %d (%v); want %d", total, perNode, hosts)
	}

	testBatchedReleases(t, c, func(ctx context.Context) error {
		return c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
			return n.ScriptFlush(ctx).Err()
		})
	})
}
