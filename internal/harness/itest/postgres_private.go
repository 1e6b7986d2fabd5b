package itest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/shardpipe/shardpipe/integration"
)

// PrivatePostgres is a PostgreSQL server of this test alone: initdb in a
// directory of its own (user shardpipe, scram-sha-256, a random
// password), listening on 127.0.0.1 only with fsync and synchronous_commit
// on, for tests that stop or restart it. Run as root, the server runs as
// the postgres user (initdb and postgres refuse root).
type PrivatePostgres struct {
	bin, dir, data string
	Port           int
	Password       string
}

// StartPrivatePostgres initialises and starts a private server (a few
// seconds), stopped and removed when the test ends. It needs Debian's
// postgresql package (/usr/lib/postgresql/N/bin): skipped without it, or
// failed when SHARDPIPE_REQUIRE_INTEGRATION=1.
func StartPrivatePostgres(t *testing.T) *PrivatePostgres {
	t.Helper()
	bin := postgresBin()
	if bin == "" {
		msg := "no PostgreSQL server binaries in /usr/lib/postgresql/N/bin (apt-get install postgresql)"
		if integration.Required() {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	dir, err := os.MkdirTemp("", "shardpipe-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	pw := make([]byte, 12)
	_, _ = rand.Read(pw)
	p := &PrivatePostgres{bin: bin, dir: dir, data: filepath.Join(dir, "data"), Password: hex.EncodeToString(pw)}
	pwFile := filepath.Join(dir, "password")
	if err := os.WriteFile(pwFile, []byte(p.Password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("private postgres: run as root, the server needs the postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		for _, f := range []string{dir, pwFile} {
			if err := os.Chown(f, uid, gid); err != nil {
				t.Fatal(err)
			}
		}
	}
	if out, err := p.as("initdb", "-D", p.data, "-U", "shardpipe", "-A", "scram-sha-256", "--pwfile="+pwFile).CombinedOutput(); err != nil {
		t.Fatalf("private postgres: initdb in %s: %v\n%s", dir, err, out)
	}
	addr := integration.ClosedAddr(t)
	p.Port, _ = strconv.Atoi(addr[strings.LastIndexByte(addr, ':')+1:])
	t.Cleanup(func() { _, _ = p.ctl("stop", "-m", "immediate") })
	p.Start(t)
	return p
}

// URL is the server's postgres:// URL, password included.
func (p *PrivatePostgres) URL() string {
	return fmt.Sprintf("postgres://shardpipe:%s@127.0.0.1:%d/postgres", p.Password, p.Port)
}

// Start starts the server and waits until it takes connections.
func (p *PrivatePostgres) Start(t *testing.T) {
	t.Helper()
	if out, err := p.ctl("start", "-l", filepath.Join(p.dir, "postgres.log"), "-o", p.settings()); err != nil {
		t.Fatalf("private postgres: start on port %d: %v\n%s\n%s", p.Port, err, out, p.logTail())
	}
}

// Stop stops the server at once (pg_ctl -m immediate: no checkpoint, the
// connections cut, crash recovery at the next start) and waits for it to
// exit.
func (p *PrivatePostgres) Stop(t *testing.T) {
	t.Helper()
	if out, err := p.ctl("stop", "-m", "immediate"); err != nil {
		t.Fatalf("private postgres: stop: %v\n%s", err, out)
	}
}

// Restart is an immediate stop and a start (pg_ctl restart -m immediate).
func (p *PrivatePostgres) Restart(t *testing.T) {
	t.Helper()
	if out, err := p.ctl("restart", "-m", "immediate", "-l", filepath.Join(p.dir, "postgres.log"), "-o", p.settings()); err != nil {
		t.Fatalf("private postgres: restart: %v\n%s\n%s", err, out, p.logTail())
	}
}

func (p *PrivatePostgres) settings() string {
	return fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s -c fsync=on -c synchronous_commit=on", p.Port, p.dir)
}

// ctl runs pg_ctl on the data directory, waiting up to 60 s.
func (p *PrivatePostgres) ctl(args ...string) ([]byte, error) {
	return p.as("pg_ctl", append([]string{"-D", p.data, "-w", "-t", "60"}, args...)...).CombinedOutput()
}

// as is the server binary name run as the postgres user when root.
func (p *PrivatePostgres) as(name string, args ...string) *exec.Cmd {
	path := filepath.Join(p.bin, name)
	if os.Geteuid() == 0 {
		return exec.Command("runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	}
	return exec.Command(path, args...)
}

func (p *PrivatePostgres) logTail() string {
	b, _ := os.ReadFile(filepath.Join(p.dir, "postgres.log"))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// postgresBin is the newest installed server's bin directory, or "".
func postgresBin() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return vi < vj
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "initdb")); err == nil {
			return dirs[i]
		}
	}
	return ""
}
