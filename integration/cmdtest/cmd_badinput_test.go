package cmdtest_test

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
)

// TestCmdBadInput runs the binary with bad flags and environment, an
// unreachable broker, an unreachable Redis and a missing topic on the real
// servers: each gives its one-line error and exit code within a bounded time.
func TestCmdBadInput(t *testing.T) {
	t.Parallel()
	brokers, addr := integration.Kafka(t), integration.Redis(t)
	bin := itest.BuildShardpipe(t)
	topic := integration.CreateTopic(t, brokers, 1)
	b := strings.Join(brokers, ",")
	dead := integration.ClosedAddr(t)
	tests := []struct {
		name string
		args []string
		env  []string
		code int
		want string
	}{
		{"bad flag value", []string{"--commit-every", "-5"}, nil, 2, "--commit-every (SHARDPIPE_COMMIT_EVERY) -5: want 0 to 1000000 (0: off)"},
		{"unknown flag", []string{"--comit-every", "5"}, nil, 2, "flag provided but not defined: -comit-every"},
		{"bad env value", nil, []string{"SHARDPIPE_GROUP_PROTOCOL=eager"}, 2, `--group-protocol (SHARDPIPE_GROUP_PROTOCOL) "eager": want classic or consumer`},
		{"unparsable env value", nil, []string{"SHARDPIPE_SHUTDOWN_TIMEOUT=later"}, 2, `environment variable "SHARDPIPE_SHUTDOWN_TIMEOUT"`},
		{"unreachable broker", []string{"--brokers", dead}, nil, 3, "kafka " + dead + ": cannot reach a broker"},
		{"unreachable redis", []string{"--redis", dead}, nil, 3, "redis " + dead + ": PING failed"},
		{"missing topic", []string{"--topic", topic + "-missing"}, nil, 3, `kafka: topic "` + topic + `-missing" does not exist`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			// Flags given later win for single-value flags; --brokers and
			// --topic are lists, so they are given once.
			brokersArg, topicArg := b, topic
			var rest []string
			for i := 0; i < len(tt.args); i += 2 {
				switch tt.args[i] {
				case "--brokers":
					brokersArg = tt.args[i+1]
				case "--topic":
					topicArg = tt.args[i+1]
				default:
					rest = append(rest, tt.args[i], tt.args[i+1])
				}
			}
			args := append([]string{"run", "--brokers", brokersArg, "--topic", topicArg, "--redis", addr,
				"--connect-timeout", "3s"}, rest...)
			cmd := exec.CommandContext(ctx, bin, args...)
			cmd.Env = append(itest.WithoutShardpipeEnv(), tt.env...)
			start := time.Now()
			out, err := cmd.CombinedOutput()
			took := time.Since(start)
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != tt.code {
				t.Fatalf("exit: %v, want code %d\n%s", err, tt.code, out)
			}
			var lines []string
			for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				if strings.HasPrefix(l, "shardpipe: ") && !strings.HasPrefix(l, "shardpipe: see ") {
					lines = append(lines, l) // the problems, not the log lines (waiting for Redis, say)
				}
			}
			if len(lines) != 1 || !strings.Contains(lines[0], tt.want) {
				t.Fatalf("output lines %q, want one containing %q", lines, tt.want)
			}
			if took > 10*time.Second {
				t.Fatalf("took %v with --connect-timeout 3s", took)
			}
			t.Logf("exit %d in %v: %s", tt.code, took.Round(time.Millisecond), lines[0])
		})
	}
}
