package integration_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/internal/harness/chaoscheck"
)

// receiverProc is the receiver process (internal/harness/cmd/receiver): the
// external system `run --effect http` calls, in a process of its own.
type receiverProc struct {
	t    *testing.T
	cmd  *exec.Cmd
	addr string
	hc   *http.Client
	done chan struct{}
}

// receiverStats is its GET /_control/stats.
type receiverStats struct {
	Calls    int            `json:"calls"`
	Held     int            `json:"held"`
	HeldBy   map[string]int `json:"held_by"`
	OKKeys   int            `json:"ok_keys"`
	Problems []string       `json:"problems"`
}

// receiverCall is one call it recorded (GET /_control/calls): the
// receiver's one record of a call, as the chaos checker reads it.
type receiverCall = chaoscheck.Call

// startReceiver builds and starts the receiver with args (its behaviour
// flags) on a free loopback port, and stops it at the end of the test.
func startReceiver(t *testing.T, args ...string) *receiverProc {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "receiver")
	build := exec.Command("go", "build", "-o", bin, "./internal/harness/cmd/receiver")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./internal/harness/cmd/receiver: %v\n%s", err, out)
	}
	addrFile := filepath.Join(dir, "addr")
	log, err := os.Create(filepath.Join(dir, "receiver.log"))
	if err != nil {
		t.Fatal(err)
	}
	rc := &receiverProc{t: t, hc: &http.Client{Timeout: 10 * time.Second}, done: make(chan struct{}),
		cmd: exec.Command(bin, append([]string{"-calls", filepath.Join(dir, "calls.jsonl"), "-addr-file", addrFile}, args...)...)}
	rc.cmd.Stdout, rc.cmd.Stderr = log, log
	if err := rc.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = rc.cmd.Wait(); log.Close(); close(rc.done) }()
	t.Cleanup(func() {
		_ = rc.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-rc.done:
		case <-time.After(30 * time.Second):
			_ = rc.cmd.Process.Kill()
			<-rc.done
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, err := os.ReadFile(addrFile); err == nil {
			rc.addr = strings.TrimSpace(string(b))
			return rc
		}
		select {
		case <-rc.done:
			b, _ := os.ReadFile(filepath.Join(dir, "receiver.log"))
			t.Fatalf("receiver exited before it listened: %s", b)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("receiver wrote no address within 30s")
		}
		time.Sleep(10 * time.Millisecond) // polls for the address file: there is no event to wait on
	}
}

// URL is where `run --effect http` posts.
func (rc *receiverProc) URL() string { return "http://" + rc.addr + "/orders" }

func (rc *receiverProc) get(path string, v any) {
	rc.t.Helper()
	resp, err := rc.hc.Get("http://" + rc.addr + path)
	if err != nil {
		rc.t.Fatalf("receiver %s: %v", path, err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		rc.t.Fatalf("receiver %s: %v", path, err)
	}
}

func (rc *receiverProc) stats() receiverStats {
	rc.t.Helper()
	var st receiverStats
	rc.get("/_control/stats", &st)
	return st
}

func (rc *receiverProc) calls() []receiverCall {
	rc.t.Helper()
	var cs []receiverCall
	rc.get("/_control/calls", &cs)
	return cs
}

// control posts hold or release.
func (rc *receiverProc) control(what string) {
	rc.t.Helper()
	resp, err := rc.hc.Post("http://"+rc.addr+"/_control/"+what, "", nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		rc.t.Fatalf("receiver %s: %v %v", what, resp, err)
	}
	resp.Body.Close()
}

// await polls the receiver's stats until cond holds; it fails the test
// when one of procs exits first or ctx ends.
func (rc *receiverProc) await(ctx context.Context, what string, cond func(receiverStats) bool, procs ...*proc) receiverStats {
	rc.t.Helper()
	for {
		st := rc.stats()
		if cond(st) {
			return st
		}
		for _, p := range procs {
			select {
			case <-p.done:
				rc.t.Fatalf("waiting for %s: %s exited (code %d):\n%s", what, p.name, p.code, p.output())
			default:
			}
		}
		select {
		case <-ctx.Done():
			rc.t.Fatalf("waiting for %s: %v; receiver %+v", what, ctx.Err(), st)
		case <-time.After(20 * time.Millisecond): // poll interval of a condition
		}
	}
}
