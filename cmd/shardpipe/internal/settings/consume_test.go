package settings

import (
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/pipeline"
)

func TestConsumeGroup(t *testing.T) {
	tests := []struct {
		args []string
		want []string
		cs   Consume
	}{
		{nil, nil, Consume{Protocol: pipeline.Classic, SessionTimeout: 45 * time.Second, ShutdownTimeout: 30 * time.Second, CreateDLQ: true}},
		{[]string{"--group-protocol=consumer", "--start=latest", "--session-timeout=6s", "--shutdown-timeout=1s", "--instance-id= pod-0 ", "--create-dlq-topic=false"}, nil,
			Consume{Protocol: pipeline.Consumer, StartLatest: true, SessionTimeout: 6 * time.Second, ShutdownTimeout: time.Second, InstanceID: "pod-0"}},
		{[]string{"--group-protocol=848", "--start=middle", "--session-timeout=0s", "--shutdown-timeout=-1s", "--instance-id= "}, []string{
			`--group-protocol (SHARDPIPE_GROUP_PROTOCOL) "848": want classic or consumer`, `--start (SHARDPIPE_START) "middle": want earliest or latest`,
			"--session-timeout (SHARDPIPE_SESSION_TIMEOUT) 0s: want 1ms to 1h", "--shutdown-timeout (SHARDPIPE_SHUTDOWN_TIMEOUT) -1s: want 1ms to 1h",
			`--instance-id (SHARDPIPE_INSTANCE_ID) " ": `}, Consume{}},
	}
	for _, tt := range tests {
		var cs Consume
		bad := load(t, ConsumeGroup(&cs), tt.args...)
		checkProblems(t, tt.args, bad, tt.want...)
		if len(tt.want) == 0 && cs != tt.cs {
			t.Errorf("%q: loaded %+v, want %+v", tt.args, cs, tt.cs)
		}
	}
}

func TestSessionLimit(t *testing.T) {
	tests := []struct {
		cs   Consume
		want string
	}{
		{Consume{Protocol: pipeline.Classic, SessionTimeout: 6 * time.Second}, "6s (--session-timeout)"},
		{Consume{Protocol: pipeline.Consumer, SessionTimeout: 6 * time.Second}, "the broker's group.consumer.session.timeout.ms (45s by default)"},
	}
	for _, tt := range tests {
		if got := tt.cs.SessionLimit(); got != tt.want {
			t.Errorf("%v: %q, want %q", tt.cs.Protocol, got, tt.want)
		}
	}
}

func TestMetricsGroup(t *testing.T) {
	tests := []struct {
		args []string
		want []string
		addr string
	}{
		{nil, nil, ""},
		{[]string{"--metrics-addr=:9464"}, nil, ":9464"},
		{[]string{"--metrics-addr=127.0.0.1"}, []string{`--metrics-addr (SHARDPIPE_METRICS_ADDR) "127.0.0.1": `}, "127.0.0.1"},
	}
	for _, tt := range tests {
		var addr string
		bad := load(t, MetricsGroup(&addr, "m"), tt.args...)
		checkProblems(t, tt.args, bad, tt.want...)
		if addr != tt.addr {
			t.Errorf("%q: address %q, want %q", tt.args, addr, tt.addr)
		}
	}
}
