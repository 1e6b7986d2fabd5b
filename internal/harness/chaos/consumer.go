package chaos

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// consumer is one `shardpipe run` OS process (one instance of a slot: a
// killed consumer is restarted as a new instance of the same slot).
type consumer struct {
	slot, instance int
	protocol       string
	id             string // host/pid: how it names itself to the chaos receiver
	logPath        string
	cmd            *exec.Cmd
	done           chan struct{} // closed when the process has exited
	err            error         // the exit status, valid after done

	mu          sync.Mutex
	metricsAddr string  // where it serves metrics, from its log ("" until it says)
	scraped     figures // the latest metrics scrape
	paused      bool
	signaled    bool // the driver killed or terminated it: its exit is expected
}

// figures are what a shardpipe process reports about itself.
type figures struct {
	suppressed, fenced int64
	uncommitted        int64 // landed but not committed: what a zombie wakes holding
}

// startConsumer starts `shardpipe run` with args (env added to its
// environment) plus a log file and
// metrics on a port it picks itself (127.0.0.1:0; its log names the
// address), so no port picked here can be taken before it binds.
func startConsumer(bin, logDir string, slot, instance int, protocol string, args []string, env ...string) (*consumer, error) {
	c := &consumer{slot: slot, instance: instance, protocol: protocol,
		logPath: filepath.Join(logDir, fmt.Sprintf("consumer-%d-%02d-%s.log", slot, instance, protocol)),
		done:    make(chan struct{})}
	f, err := os.Create(c.logPath)
	if err != nil {
		return nil, err
	}
	full := append([]string{"run", "--group-protocol", protocol, "--metrics-addr", "127.0.0.1:0"}, args...)
	c.cmd = exec.Command(bin, full...)
	c.cmd.Env = append(cleanEnv(), env...)
	c.cmd.Stdout, c.cmd.Stderr = f, f
	if err := c.cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start consumer %d: %w", slot, err)
	}
	host, _ := os.Hostname()
	c.id = host + "/" + strconv.Itoa(c.cmd.Process.Pid)
	go func() {
		c.err = c.cmd.Wait()
		f.Close()
		close(c.done)
	}()
	return c, nil
}

// cleanEnv is the environment without SHARDPIPE_ variables, which `run`
// would read as flags.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SHARDPIPE_") {
			env = append(env, kv)
		}
	}
	return env
}

// freeAddr returns a 127.0.0.1 address with a port free right now.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func (c *consumer) String() string {
	return fmt.Sprintf("consumer %d.%d (%s, pid %d)", c.slot, c.instance, c.protocol, c.cmd.Process.Pid)
}

func (c *consumer) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// signal sends sig; after SIGKILL or SIGTERM the exit is the driver's doing.
func (c *consumer) signal(sig syscall.Signal) error {
	c.mu.Lock()
	switch sig {
	case syscall.SIGKILL, syscall.SIGTERM:
		c.signaled = true
	case syscall.SIGSTOP:
		c.paused = true
	case syscall.SIGCONT:
		c.paused = false
	}
	c.mu.Unlock()
	return c.cmd.Process.Signal(sig)
}

// wait waits for the exit, at most d.
func (c *consumer) wait(d time.Duration) error {
	select {
	case <-c.done:
		return nil
	case <-time.After(d):
		return fmt.Errorf("%s did not exit within %v", c, d)
	}
}
