package flagcheck

import (
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestSmallClient: SmallClient(n) is a client of its own with at most n
// connections (per node of a cluster), the target's other options kept;
// Client keeps the pool size the target asks for.
func TestSmallClient(t *testing.T) {
	tests := []struct {
		name, spec string
		cluster    bool
	}{
		{"single", "redis://h:6379/2?pool_size=40&client_name=sp", false},
		{"cluster", "a:1,b:2", true},
		{"sentinel", "redis://s1:26379/0?master_name=m&pool_size=40", false},
	}
	type pool struct {
		size int
		ctx  bool
	}
	poolOf := func(rdb redis.UniversalClient) pool {
		switch c := rdb.(type) {
		case *redis.Client:
			return pool{c.Options().PoolSize, c.Options().ContextTimeoutEnabled}
		case *redis.ClusterClient:
			return pool{c.Options().PoolSize, c.Options().ContextTimeoutEnabled}
		}
		t.Fatalf("client %T", rdb)
		return pool{}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target, err := ParseRedis(tt.spec, tt.cluster)
			if err != nil {
				t.Fatal(err)
			}
			big, small := target.Client(), target.SmallClient(2)
			defer big.Close()
			defer small.Close()
			if got := poolOf(small); got != (pool{2, true}) {
				t.Errorf("SmallClient(2): pool %+v, want size 2 with context timeouts", got)
			}
			if got := poolOf(big); got.size == 2 || !got.ctx {
				t.Errorf("Client: pool %+v, want the target's own size", got)
			}
			if c, ok := small.(*redis.Client); ok && tt.name == "single" && (c.Options().ClientName != "sp" || c.Options().DB != 2) {
				t.Errorf("SmallClient dropped the URL's options: %+v", c.Options())
			}
		})
	}
}
