package clusters

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// script runs scripts/services.sh of the repository at root with its state
// in dir, and env (KEY=VALUE: services.sh settings) in its environment.
type script struct {
	root, dir string
	env       []string
}

// run runs services.sh with args; its output goes into the error on failure.
func (s script) run(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(s.root, "scripts", "services.sh"), args...)
	cmd.Dir = s.root
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SHARDPIPE_SERVICES_DIR=") && !strings.HasPrefix(kv, "SHARDPIPE_REDIS_CLUSTER_PORTS=") &&
			!strings.HasPrefix(kv, "SHARDPIPE_KAFKA_CLUSTER_PORTS=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(append(env, s.env...), "SHARDPIPE_SERVICES_DIR="+s.dir)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("services.sh %s: %w\n%s%s", strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String(), nil
}

// variable reads one variable of `services.sh env`.
func (s script) variable(ctx context.Context, name string) (string, error) {
	out, err := s.run(ctx, "env")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, name+"="); ok {
			return v, nil
		}
	}
	return "", fmt.Errorf("services.sh env printed no %s:\n%s", name, out)
}

// start runs `services.sh start NAME`. A port picked free may be taken before
// the server binds it: then the state is removed and new ports are picked,
// up to three times.
func (s script) start(ctx context.Context, name string) error {
	for attempt := 1; ; attempt++ {
		_, err := s.run(ctx, "start", name)
		if err == nil || attempt == 3 || !bindFailure(err) {
			return err
		}
		_, _ = s.run(ctx, "stop", name)
		if rerr := os.RemoveAll(filepath.Join(s.dir, name)); rerr != nil {
			return fmt.Errorf("%w; removing the state for new ports: %w", err, rerr)
		}
	}
}

func bindFailure(err error) bool {
	for _, s := range []string{"is taken by a process this script did not start", "Address already in use", "BindException"} {
		if strings.Contains(err.Error(), s) {
			return true
		}
	}
	return false
}

// pid reads a node's pid file.
func (s script) pid(file string) (int, error) {
	b, err := os.ReadFile(filepath.Join(s.dir, file))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// signal sends sig to the process of the pid file.
func (s script) signal(file string, sig syscall.Signal) error {
	pid, err := s.pid(file)
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, sig); err != nil {
		return fmt.Errorf("signal %v to pid %d (%s): %w", sig, pid, file, err)
	}
	return nil
}

// poll calls f every interval until it returns true or an error, or until
// ctx ends or d passes.
func poll(ctx context.Context, d, interval time.Duration, what string, f func() (bool, error)) error {
	deadline := time.Now().Add(d)
	var last error
	for {
		ok, err := f()
		if ok {
			return nil
		}
		last = err
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not within %v (last error: %v)", what, d, last)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w (last error: %v)", what, ctx.Err(), last)
		case <-time.After(interval): // polls the servers: no event to wait on
		}
	}
}
