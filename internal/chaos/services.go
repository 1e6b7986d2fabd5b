package chaos

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Services drives scripts/services.sh for the run's own Kafka and Redis: the
// run kills and restarts them, so they must never be servers other tests
// use. Redis runs with appendonly yes and appendfsync always, the README's
// production setting for the ledger.
type Services struct {
	Root           string // repository root (holds scripts/services.sh)
	Dir            string // SHARDPIPE_SERVICES_DIR: state, data and logs
	KafkaPort      int
	ControllerPort int
	RedisPort      int
}

// PickPorts gives every port that is 0 one that is free right now.
func (s *Services) PickPorts() error {
	taken := map[int]bool{s.KafkaPort: true, s.ControllerPort: true, s.RedisPort: true}
	for _, p := range []*int{&s.KafkaPort, &s.ControllerPort, &s.RedisPort} {
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
			!strings.HasPrefix(kv, "SHARDPIPE_REDIS_APPENDFSYNC=") {
			env = append(env, kv)
		}
	}
	return append(env,
		"SHARDPIPE_KAFKA_PORT="+strconv.Itoa(s.KafkaPort),
		"SHARDPIPE_KAFKA_CONTROLLER_PORT="+strconv.Itoa(s.ControllerPort),
		"SHARDPIPE_REDIS_PORT="+strconv.Itoa(s.RedisPort),
		"SHARDPIPE_SERVICES_DIR="+s.Dir,
		"SHARDPIPE_REDIS_APPENDFSYNC=always")
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
