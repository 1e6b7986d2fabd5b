package checkpoint

import (
	"context"
	"errors"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// TestRedisRulesMatchDecide drives the Lua script and Decide with the same
// commits and requires the same verdicts and positions. The real-server
// version of this test lives in integration/.
func TestRedisRulesMatchDecide(t *testing.T) {
	mr := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	r := NewRedis(c, Prefix("test:"))
	m := NewMemory()
	p := Partition{Topic: "orders", Partition: 3}
	for _, s := range []Position{{1, 10}, {1, 10}, {1, 5}, {0, 50}, {2, 3}, {2, 9}, {1, 99}, {3, 0}} {
		errR := r.Commit(ctx, p, s.Epoch, s.Offset)
		errM := m.Commit(ctx, p, s.Epoch, s.Offset)
		for _, sentinel := range []error{ErrStaleEpoch, ErrStaleOffset} {
			if errors.Is(errR, sentinel) != errors.Is(errM, sentinel) {
				t.Fatalf("commit %+v: redis %v, memory %v", s, errR, errM)
			}
		}
		posR, err := r.Load(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if posM, _ := m.Load(ctx, p); posR != posM {
			t.Fatalf("commit %+v: redis position %+v, memory %+v", s, posR, posM)
		}
	}
	pos, err := r.Acquire(ctx, p)
	if err != nil || pos != (Position{4, 0}) {
		t.Fatalf("Acquire = %+v, %v; want epoch 4 offset 0", pos, err)
	}
}

func TestRedisLoadEmpty(t *testing.T) {
	mr := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = c.Close() })
	pos, err := NewRedis(c, Prefix("")).Load(context.Background(), Partition{Topic: "none"})
	if err != nil || pos != (Position{}) {
		t.Fatalf("Load = %+v, %v", pos, err)
	}
}
