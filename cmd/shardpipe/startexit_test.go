package main

import (
	"net"
	"strings"
	"testing"

	"github.com/shardpipe/shardpipe/integration"
)

// TestStartupExitCodes: problems found at start-up get the contract's
// codes: bench with a server it cannot reach exits 3 naming the server
// (before: 1), and run with a --metrics-addr another process holds exits 2
// naming the flag (before: 1), before it joins the group.
func TestStartupExitCodes(t *testing.T) {
	broker, redisAddr, _ := fakes(t)
	if code, _, stderr := call(t, nil, "produce", "--brokers", broker, "--topic", "orders", "--partitions", "1", "--count", "1"); code != 0 {
		t.Fatalf("produce: exit %d: %s", code, stderr)
	}
	dead := integration.ClosedAddr(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"bench broker", []string{"bench", "--brokers", dead, "--redis", redisAddr}, exitUnavailable, "kafka " + dead + ": cannot reach a broker"},
		{"bench redis", []string{"bench", "--brokers", broker, "--redis", dead}, exitUnavailable, "redis " + dead + ": PING failed"},
		{"metrics address taken", []string{"run", "--brokers", broker, "--redis", redisAddr, "--topic", "orders",
			"--metrics-addr", taken.Addr().String()}, exitUsage, "--metrics-addr (SHARDPIPE_METRICS_ADDR) " + taken.Addr().String() + ": "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := call(t, nil, tt.args...)
			var lines []string
			for _, l := range problemLines(stderr) {
				if strings.HasPrefix(l, "shardpipe: ") {
					lines = append(lines, l)
				}
			}
			if code != tt.code || len(lines) != 1 || !strings.Contains(lines[0], tt.want) {
				t.Fatalf("exit %d, lines %q; want exit %d and one line containing %q\n%s", code, lines, tt.code, tt.want, stderr)
			}
		})
	}
}
