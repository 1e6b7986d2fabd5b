package sink

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestNewDurableRefuses(t *testing.T) {
	single := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer single.Close()
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	defer cluster.Close()
	tests := []struct {
		name  string
		c     redis.UniversalClient
		fence string
		opts  []DurableOpt
		want  string // "" for no error
	}{
		{"local", single, "f", []DurableOpt{WithLocalFsync()}, ""},
		{"replicas with WAIT", single, "f", []DurableOpt{WithReplicas(1), WithWAIT()}, ""},
		{"cluster", cluster, "f", []DurableOpt{WithReplicas(1), WithWAIT()}, ""},
		{"cluster fence with a hash tag", cluster, "{x}f", []DurableOpt{WithReplicas(1)}, "hash tag"},
		{"no fence", single, "", []DurableOpt{WithLocalFsync()}, "empty fence key"},
		{"nothing to wait for", single, "f", nil, "nothing to wait for"},
		{"local with WAIT", single, "f", []DurableOpt{WithLocalFsync(), WithWAIT()}, "needs WAITAOF"},
		{"negative replicas", single, "f", []DurableOpt{WithReplicas(-1)}, "-1 replicas"},
		{"timeout past the read timeout", single, "f", []DurableOpt{WithLocalFsync(), WithWaitTimeout(5 * time.Second)}, "read timeout"},
		{"timeout below 1ms", single, "f", []DurableOpt{WithLocalFsync(), WithWaitTimeout(time.Microsecond)}, "below 1ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewDurable(tt.c, tt.fence, tt.opts...)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("NewDurable: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("NewDurable: %v, want an error with %q", err, tt.want)
			}
		})
	}
}
