package politeredis

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/polite-go/polite/pace"
	"github.com/redis/go-redis/v9"
)

const crashEnv = "POLITEREDIS_CRASH_CHILD" // the key the child holds

// crashLease is the lease duration of TestCrashedProcess.
const crashLease = time.Second

// crashPolicy is the policy of TestCrashedProcess: only the slot waits.
func crashPolicy() pace.Policy {
	p := pace.Policy{BaseDelay: pace.None, LatencyFactor: pace.None}
	return p
}

// crashChild takes the only slot of a key, says so, and hangs until it is
// killed.
func crashChild() int {
	c := redis.NewClient(clientOptions(os.Getenv(fleetSockEnv)))
	p := NewPacer(c, WithKeyPrefix("crash"), WithLeaseDuration(crashLease), FailWhenUnreachable())(pace.Config{Policy: crashPolicy()})
	if _, err := p.Acquire(context.Background(), pace.Request{Key: os.Getenv(crashEnv)}); err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Println("held")
	select {}
}

// TestCrashedProcess kills a process that holds a host's only slot: the
// host moves on when the lease expires.
func TestCrashedProcess(t *testing.T) {
	c := newClient(t)
	key := freshPrefix() + ".example"
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashEnv+"="+key, fleetSockEnv+"="+sock)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	held := time.Now()
	if line != "held\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child said %q; want held", line)
	}
	cmd.Process.Kill()
	cmd.Wait()

	p := NewPacer(c, WithKeyPrefix("crash"), WithLeaseDuration(crashLease), FailWhenUnreachable())(pace.Config{Policy: crashPolicy()})
	l, err := p.Acquire(context.Background(), pace.Request{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	p.Release(l, pace.Outcome{Class: pace.Success})
	// The lease was taken before held; the poll interval bounds the delay.
	if got := time.Since(held); got < crashLease-100*time.Millisecond || got > crashLease+time.Second {
		t.Errorf("start after the holder was killed = +%v; want about its lease, %v", got, crashLease)
	}
}
