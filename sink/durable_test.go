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
		name string
		c    redis.UniversalClient
		cfg  DurableConfig
		want string // "" for no error
	}{
		{"local", single, DurableConfig{FenceKey: "f", LocalFsync: true}, ""},
		{"replicas with WAIT", single, DurableConfig{FenceKey: "f", Replicas: 1, UseWait: true}, ""},
		{"cluster", cluster, DurableConfig{FenceKey: "f", Replicas: 1, UseWait: true}, ""},
		{"cluster fence with a hash tag", cluster, DurableConfig{FenceKey: "{x}f", Replicas: 1}, "hash tag"},
		{"no fence", single, DurableConfig{LocalFsync: true}, "empty fence key"},
		{"nothing to wait for", single, DurableConfig{FenceKey: "f"}, "nothing to wait for"},
		{"local with WAIT", single, DurableConfig{FenceKey: "f", LocalFsync: true, UseWait: true}, "needs WAITAOF"},
		{"negative replicas", single, DurableConfig{FenceKey: "f", Replicas: -1}, "-1 replicas"},
		{"timeout past the read timeout", single, DurableConfig{FenceKey: "f", LocalFsync: true, Timeout: 5 * time.Second}, "read timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewDurable(tt.c, tt.cfg)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("NewDurable: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("NewDurable: %v, want an error with %q", err, tt.want)
			}
		})
	}
}
