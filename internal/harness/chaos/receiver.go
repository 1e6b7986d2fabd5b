package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// receiver is the chaos receiver process of a guard pass
// (internal/harness/cmd/receiver): the external system `run --effect http` calls.
type receiver struct {
	cmd     *exec.Cmd
	addr    string
	calls   string // its calls file, for the checker
	logPath string
	done    chan struct{}
	err     error
	hc      *http.Client
}

// startReceiver starts bin with its calls file and log in dir, and waits
// until it has written the address it listens on.
func startReceiver(ctx context.Context, bin, dir, name string) (*receiver, error) {
	rc := &receiver{calls: filepath.Join(dir, name+"-calls.jsonl"), logPath: filepath.Join(dir, name+"-receiver.log"),
		done: make(chan struct{}), hc: &http.Client{Timeout: 5 * time.Second}}
	addrFile := filepath.Join(dir, name+"-receiver.addr")
	f, err := os.Create(rc.logPath)
	if err != nil {
		return nil, err
	}
	rc.cmd = exec.Command(bin, "-calls", rc.calls, "-addr-file", addrFile)
	rc.cmd.Stdout, rc.cmd.Stderr = f, f
	if err := rc.cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start receiver: %w", err)
	}
	go func() {
		rc.err = rc.cmd.Wait()
		f.Close()
		close(rc.done)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, err := os.ReadFile(addrFile); err == nil {
			rc.addr = strings.TrimSpace(string(b))
			return rc, nil
		}
		select {
		case <-rc.done:
			return nil, fmt.Errorf("receiver exited before it listened (%v): %s", rc.err, tail(rc.logPath, 5))
		case <-ctx.Done():
			rc.kill()
			return nil, ctx.Err()
		default:
		}
		if time.Now().After(deadline) {
			rc.kill()
			return nil, fmt.Errorf("receiver wrote no address within 30s: %s", tail(rc.logPath, 5))
		}
		time.Sleep(20 * time.Millisecond) // polls for the address file; there is no event to wait on
	}
}

// URL is where `run --effect http` posts.
func (rc *receiver) URL() string { return "http://" + rc.addr + "/orders" }

// receiverStats is the receiver's /_control/stats.
type receiverStats struct {
	Calls int `json:"calls"` // calls answered
	Held  int `json:"held"`  // calls received and waiting for the release
}

func (rc *receiver) stats(ctx context.Context) (receiverStats, error) {
	var s receiverStats
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+rc.addr+"/_control/stats", nil)
	if err != nil {
		return s, err
	}
	resp, err := rc.hc.Do(req)
	if err != nil {
		return s, fmt.Errorf("receiver stats: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return s, fmt.Errorf("receiver stats: %s", resp.Status)
	}
	return s, json.NewDecoder(resp.Body).Decode(&s)
}

// control posts /_control/what (hold or release).
func (rc *receiver) control(ctx context.Context, what string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+rc.addr+"/_control/"+what, nil)
	if err != nil {
		return err
	}
	resp, err := rc.hc.Do(req)
	if err != nil {
		return fmt.Errorf("receiver %s: %w", what, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("receiver %s: %s", what, resp.Status)
	}
	return nil
}

// stop ends the receiver with SIGTERM (it answers what it holds, flushes
// its calls file and exits 0).
func (rc *receiver) stop() error {
	_ = rc.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-rc.done:
	case <-time.After(time.Minute):
		rc.kill()
		return fmt.Errorf("receiver did not exit within a minute of SIGTERM")
	}
	if rc.err != nil {
		return fmt.Errorf("receiver: %w; its log ends:\n%s", rc.err, tail(rc.logPath, 5))
	}
	return nil
}

func (rc *receiver) kill() {
	_ = rc.cmd.Process.Kill()
	<-rc.done
}
