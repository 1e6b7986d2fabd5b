package itest

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

// ReceiverProc is the receiver process (internal/harness/cmd/receiver): the
// external system `run --effect http` calls, in a process of its own.
type ReceiverProc struct {
	T    *testing.T
	Cmd  *exec.Cmd
	Addr string
	Hc   *http.Client
	Done chan struct{}
}

// ReceiverStats is its GET /_control/stats.
type ReceiverStats struct {
	Calls    int            `json:"calls"`
	Held     int            `json:"held"`
	HeldBy   map[string]int `json:"held_by"`
	OKKeys   int            `json:"ok_keys"`
	Problems []string       `json:"problems"`
}

// ReceiverCall is one call it recorded (GET /_control/calls): the
// receiver's one record of a call, as the chaos checker reads it.
type ReceiverCall = chaoscheck.Call

// StartReceiver builds and starts the receiver with args (its behaviour
// flags) on a free loopback port, and stops it at the end of the test.
func StartReceiver(t *testing.T, args ...string) *ReceiverProc {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "receiver")
	build := exec.Command("go", "build", "-o", bin, "./internal/harness/cmd/receiver")
	build.Dir = RepoRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./internal/harness/cmd/receiver: %v\n%s", err, out)
	}
	addrFile := filepath.Join(dir, "addr")
	log, err := os.Create(filepath.Join(dir, "receiver.log"))
	if err != nil {
		t.Fatal(err)
	}
	rc := &ReceiverProc{T: t, Hc: &http.Client{Timeout: 10 * time.Second}, Done: make(chan struct{}),
		Cmd: exec.Command(bin, append([]string{"-calls", filepath.Join(dir, "calls.jsonl"), "-addr-file", addrFile}, args...)...)}
	rc.Cmd.Stdout, rc.Cmd.Stderr = log, log
	if err := rc.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = rc.Cmd.Wait(); log.Close(); close(rc.Done) }()
	t.Cleanup(func() {
		_ = rc.Cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-rc.Done:
		case <-time.After(30 * time.Second):
			_ = rc.Cmd.Process.Kill()
			<-rc.Done
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, err := os.ReadFile(addrFile); err == nil {
			rc.Addr = strings.TrimSpace(string(b))
			return rc
		}
		select {
		case <-rc.Done:
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
func (rc *ReceiverProc) URL() string { return "http://" + rc.Addr + "/orders" }

func (rc *ReceiverProc) Get(path string, v any) {
	rc.T.Helper()
	resp, err := rc.Hc.Get("http://" + rc.Addr + path)
	if err != nil {
		rc.T.Fatalf("receiver %s: %v", path, err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		rc.T.Fatalf("receiver %s: %v", path, err)
	}
}

func (rc *ReceiverProc) Stats() ReceiverStats {
	rc.T.Helper()
	var st ReceiverStats
	rc.Get("/_control/stats", &st)
	return st
}

func (rc *ReceiverProc) Calls() []ReceiverCall {
	rc.T.Helper()
	var cs []ReceiverCall
	rc.Get("/_control/calls", &cs)
	return cs
}

// Control posts hold or release.
func (rc *ReceiverProc) Control(what string) {
	rc.T.Helper()
	resp, err := rc.Hc.Post("http://"+rc.Addr+"/_control/"+what, "", nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		rc.T.Fatalf("receiver %s: %v %v", what, resp, err)
	}
	resp.Body.Close()
}

// Await polls the receiver's stats until cond holds; it fails the test
// when one of procs exits first or ctx ends.
func (rc *ReceiverProc) Await(ctx context.Context, what string, cond func(ReceiverStats) bool, procs ...*Proc) ReceiverStats {
	rc.T.Helper()
	for {
		st := rc.Stats()
		if cond(st) {
			return st
		}
		for _, p := range procs {
			select {
			case <-p.Done:
				rc.T.Fatalf("waiting for %s: %s exited (code %d):\n%s", what, p.Name, p.Code, p.Output())
			default:
			}
		}
		select {
		case <-ctx.Done():
			rc.T.Fatalf("waiting for %s: %v; receiver %+v", what, ctx.Err(), st)
		case <-time.After(20 * time.Millisecond): // poll interval of a condition
		}
	}
}
