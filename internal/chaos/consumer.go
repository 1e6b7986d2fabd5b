package chaos

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
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
	logPath        string
	metricsAddr    string
	cmd            *exec.Cmd
	done           chan struct{} // closed when the process has exited
	err            error         // the exit status, valid after done

	mu       sync.Mutex
	scraped  figures // the latest metrics scrape
	paused   bool
	signaled bool // the driver killed or terminated it: its exit is expected
}

// figures are what a shardpipe process reports about itself.
type figures struct {
	suppressed, fenced int64
	uncommitted        int64 // landed but not committed: what a zombie wakes holding
}

// startConsumer starts `shardpipe run` with args plus its own metrics address
// and log file.
func startConsumer(bin, logDir string, slot, instance int, protocol string, args []string) (*consumer, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	c := &consumer{slot: slot, instance: instance, protocol: protocol, metricsAddr: addr,
		logPath: filepath.Join(logDir, fmt.Sprintf("consumer-%d-%02d-%s.log", slot, instance, protocol)),
		done:    make(chan struct{})}
	f, err := os.Create(c.logPath)
	if err != nil {
		return nil, err
	}
	full := append([]string{"run", "--group-protocol", protocol, "--metrics-addr", addr}, args...)
	c.cmd = exec.Command(bin, full...)
	c.cmd.Env = cleanEnv()
	c.cmd.Stdout, c.cmd.Stderr = f, f
	if err := c.cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start consumer %d: %w", slot, err)
	}
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

// waitStarted waits until the log says the pipeline started (from then on
// SIGTERM means a graceful stop), at most d.
func (c *consumer) waitStarted(d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		if b, err := os.ReadFile(c.logPath); err == nil && strings.Contains(string(b), `"msg":"pipeline starting"`) {
			return nil
		}
		if c.exited() {
			return fmt.Errorf("%s exited before its pipeline started (%v)", c, c.err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: no \"pipeline starting\" in its log after %v", c, d)
		}
		time.Sleep(50 * time.Millisecond) // polls the log file; there is no event to wait on
	}
}

// scrape reads the process's suppressed and fenced counters from its
// metrics endpoint; a process that is paused or gone keeps its last figures.
func (c *consumer) scrape(ctx context.Context, hc *http.Client) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+c.metricsAddr+"/metrics", nil)
	if err != nil {
		return
	}
	resp, err := hc.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	var f figures
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, val, ok := metricLine(sc.Text())
		switch {
		case !ok:
		case name == "shardpipe_effects_suppressed_total":
			f.suppressed += int64(val)
		case name == "shardpipe_commits_fenced_total":
			f.fenced += int64(val)
		case name == "shardpipe_uncommitted_records":
			f.uncommitted += int64(val)
		}
	}
	if sc.Err() != nil {
		return
	}
	c.mu.Lock()
	c.scraped = f
	c.mu.Unlock()
}

// metricLine splits a Prometheus text line `name{labels} value`.
func metricLine(s string) (string, float64, bool) {
	if strings.HasPrefix(s, "#") {
		return "", 0, false
	}
	sp := strings.LastIndexByte(s, ' ')
	if sp < 0 {
		return "", 0, false
	}
	v, err := strconv.ParseFloat(s[sp+1:], 64)
	if err != nil {
		return "", 0, false
	}
	name := s[:sp]
	if i := strings.IndexByte(name, '{'); i >= 0 {
		name = name[:i]
	}
	return name, v, true
}

// logFacts is what a consumer's JSON log says: its final summary (absent
// after SIGKILL) and the epochs of its assignments.
type logFacts struct {
	summary *figures
	epochs  []int64
}

func readLog(path string) (logFacts, error) {
	f, err := os.Open(path)
	if err != nil {
		return logFacts{}, err
	}
	defer f.Close()
	var lf logFacts
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m struct {
			Msg        string `json:"msg"`
			Epoch      *int64 `json:"epoch"`
			Suppressed int64  `json:"suppressed"`
			Fenced     int64  `json:"fenced_commits"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		switch m.Msg {
		case "summary":
			lf.summary = &figures{suppressed: m.Suppressed, fenced: m.Fenced}
		case "partitions assigned":
			if m.Epoch != nil {
				lf.epochs = append(lf.epochs, *m.Epoch)
			}
		}
	}
	return lf, sc.Err()
}
