package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// stack runs Compose v2 on the users' docker-compose.yml with the test
// override, under a project name of its own.
type stack struct {
	compose string   // the Compose v2 binary (standalone mode)
	args    []string // -p PROJECT -f FILE -f OVERRIDE
}

// run runs one compose command and returns its standard output; the error
// names the command and carries its standard error.
func (s stack) run(ctx context.Context, args ...string) (string, error) {
	return run(ctx, s.compose, append(append([]string{}, s.args...), args...)...)
}

// containerID is the id of service's container (running or not).
func (s stack) containerID(ctx context.Context, service string) (string, error) {
	out, err := s.run(ctx, "ps", "-a", "-q", service)
	if err != nil {
		return "", err
	}
	id := strings.TrimSpace(out)
	if id == "" || strings.Contains(id, "\n") {
		return "", fmt.Errorf("service %s: want one container, compose ps says %q", service, id)
	}
	return id, nil
}

// state is what docker inspect says of a container.
type state struct {
	Status   string // running, exited, ...
	Health   string // healthy, unhealthy, starting, or "" without a healthcheck
	ExitCode int
}

func inspect(ctx context.Context, id string) (state, error) {
	out, err := run(ctx, "docker", "inspect", "-f",
		"{{.State.Status}} {{if .State.Health}}{{.State.Health.Status}}{{else}}-{{end}} {{.State.ExitCode}}", id)
	if err != nil {
		return state{}, err
	}
	f := strings.Fields(out)
	if len(f) != 3 {
		return state{}, fmt.Errorf("docker inspect %s: unexpected output %q", id, out)
	}
	code, err := strconv.Atoi(f[2])
	if err != nil {
		return state{}, fmt.Errorf("docker inspect %s: exit code %q: %w", id, f[2], err)
	}
	st := state{Status: f[0], Health: f[1], ExitCode: code}
	if st.Health == "-" {
		st.Health = ""
	}
	return st, nil
}

func run(ctx context.Context, name string, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, tail(stderr.String(), 2000))
	}
	return stdout.String(), nil
}

func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
