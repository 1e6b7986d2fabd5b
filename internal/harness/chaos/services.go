package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Services drives scripts/services.sh for the run's own Kafka and Redis: the
// run kills and restarts them, so they must never be servers other tests
// use. Redis runs with appendonly yes and appendfsync always, the
// production setting for the ledger (docs/operating.md).
type Services struct {
	Root           string // repository root (holds scripts/services.sh)
	Dir            string // SHARDPIPE_SERVICES_DIR: state, data and logs
	KafkaPort      int
	ControllerPort int
	RedisPort      int
	PostgresPort   int         // the SQL pass's PostgreSQL (started by name only: "postgres")
	picked         [4]bool     // which ports PickPorts chose (StartPicking may choose them again)
	onRetry        func(error) // tests: called before Restart tries again
}

// PickPorts gives every port that is 0 one that is free right now. A port
// free now may be taken before a server binds it: StartPicking picks again
// when that happens.
func (s *Services) PickPorts() error {
	taken := map[int]bool{s.KafkaPort: true, s.ControllerPort: true, s.RedisPort: true, s.PostgresPort: true}
	for i, p := range []*int{&s.KafkaPort, &s.ControllerPort, &s.RedisPort, &s.PostgresPort} {
		if *p == 0 {
			s.picked[i] = true
		}
		for *p == 0 {
			addr, err := freeAddr()
			if err != nil {
				return err
			}
			_, port, _ := strings.Cut(addr, ":")
			n, err := strconv.Atoi(port)
			if err != nil {
				return err
			}
			if !taken[n] {
				*p, taken[n] = n, true
			}
		}
	}
	return nil
}

// Brokers is the broker address.
func (s Services) Brokers() string { return "127.0.0.1:" + strconv.Itoa(s.KafkaPort) }

// Redis is the Redis address.
func (s Services) Redis() string { return "127.0.0.1:" + strconv.Itoa(s.RedisPort) }

func (s Services) env() []string {
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SHARDPIPE_KAFKA_PORT=") && !strings.HasPrefix(kv, "SHARDPIPE_KAFKA_CONTROLLER_PORT=") &&
			!strings.HasPrefix(kv, "SHARDPIPE_REDIS_PORT=") && !strings.HasPrefix(kv, "SHARDPIPE_SERVICES_DIR=") &&
			!strings.HasPrefix(kv, "SHARDPIPE_REDIS_APPENDFSYNC=") && !strings.HasPrefix(kv, "SHARDPIPE_POSTGRES_PORT=") {
			env = append(env, kv)
		}
	}
	if s.PostgresPort != 0 {
		env = append(env, "SHARDPIPE_POSTGRES_PORT="+strconv.Itoa(s.PostgresPort))
	}
	return append(env,
		"SHARDPIPE_KAFKA_PORT="+strconv.Itoa(s.KafkaPort),
		"SHARDPIPE_KAFKA_CONTROLLER_PORT="+strconv.Itoa(s.ControllerPort),
		"SHARDPIPE_REDIS_PORT="+strconv.Itoa(s.RedisPort),
		"SHARDPIPE_SERVICES_DIR="+s.Dir,
		"SHARDPIPE_REDIS_APPENDFSYNC=always")
}

// PostgresURL is the started PostgreSQL's URL, password included, as
// `services.sh env` prints it.
func (s Services) PostgresURL(ctx context.Context) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(s.Root, "scripts", "services.sh"), "env")
	cmd.Dir, cmd.Env = s.Root, s.env()
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("services.sh env: %w", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "POSTGRES_URL="); ok {
			return v, nil
		}
	}
	return "", errors.New("services.sh env printed no POSTGRES_URL: postgres was never started in this directory")
}

// do runs services.sh with args; its output goes into the error on failure.
func (s Services) do(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(s.Root, "scripts", "services.sh"), args...)
	cmd.Dir = s.Root
	cmd.Env = s.env()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("services.sh %s: %w\n%s", strings.Join(args, " "), err, out.String())
	}
	return nil
}

// Start starts both servers (or the one named) and waits until they answer.
func (s Services) Start(ctx context.Context, name ...string) error {
	return s.do(ctx, append([]string{"start"}, name...)...)
}

// Stop stops both servers (or the one named) gracefully.
func (s Services) Stop(ctx context.Context, name ...string) error {
	return s.do(ctx, append([]string{"stop"}, name...)...)
}

// Kill sends SIGKILL to the named server (by its pid file) and waits until
// it is gone.
func (s Services) Kill(ctx context.Context, name string) error { return s.do(ctx, "kill", name) }

// bindAttempts is how many times StartPicking picks new ports after a bind
// failure, and rebindTimeout how long Restart waits for its port.
const (
	bindAttempts  = 5
	rebindTimeout = time.Minute
)

// StartPicking starts both servers (or the one named) like Start. When a
// server cannot bind a port PickPorts chose (taken since it was free), it
// stops what started, picks new ports for those PickPorts chose, and tries
// again, up to bindAttempts times; logf says so.
func (s *Services) StartPicking(ctx context.Context, logf func(string, ...any), name ...string) error {
	for attempt := 1; ; attempt++ {
		err := s.Start(ctx, name...)
		if err == nil || !bindFailure(err) || attempt >= bindAttempts || s.picked == [4]bool{} {
			return err
		}
		_ = s.Stop(ctx, name...)
		for i, p := range []*int{&s.KafkaPort, &s.ControllerPort, &s.RedisPort, &s.PostgresPort} {
			if s.picked[i] {
				*p = 0
			}
		}
		if perr := s.PickPorts(); perr != nil {
			return errors.Join(err, perr)
		}
		logf("a port was taken before the servers bound it (%v); new ports: kafka %d, controller %d, redis %d",
			firstLine(err), s.KafkaPort, s.ControllerPort, s.RedisPort)
	}
}

// Restart starts the named server again on its port after Kill or Stop.
// The clients know that port, so it cannot change; another process may
// have taken it meanwhile (a listener, or an outgoing connection's local
// port): a start that fails to bind is tried again until the port is
// free, for up to rebindTimeout.
func (s Services) Restart(ctx context.Context, name string) error {
	deadline := time.Now().Add(rebindTimeout)
	for {
		err := s.Start(ctx, name)
		if err == nil || !bindFailure(err) || time.Now().After(deadline) {
			return err
		}
		if s.onRetry != nil {
			s.onRetry(err)
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(250 * time.Millisecond): // polls the port; no event says it is free
		}
	}
}

// bindFailure reports whether a services.sh failure is a port taken by
// another process: its own check, or the server's bind error in the log
// tail it prints.
func bindFailure(err error) bool {
	msg := err.Error()
	for _, s := range []string{"is taken by a process this script did not start", "Address already in use", "BindException"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

func firstLine(err error) string {
	line, _, _ := strings.Cut(err.Error(), "\n")
	return line
}
