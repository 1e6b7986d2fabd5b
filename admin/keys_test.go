package admin_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/admin"
)

// TestPrepareKeysApart: Prepare refuses a Setup whose Redis keys collide
// (the ledger prefix over the program's own keys, a totals hash among
// them) with ErrKeysCollide naming both settings, before it asks any
// server (the clients here point at nothing); keys apart pass that step.
func TestPrepareKeysApart(t *testing.T) {
	cl, err := kgo.NewClient(kgo.SeedBrokers("127.0.0.1:1"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	defer rdb.Close()
	for _, tc := range []struct {
		name   string
		ledger string
		keys   []string
		fence  string
		want   []string // in the error; none: apart
	}{
		{"ledger prefix over the own keys", "app:", nil, "", []string{`Setup.LedgerPrefix "app:"`, `Setup.Own "app:"`, "the dead-letter markers"}},
		{"ledger prefix holds the commit marks", "app:com", nil, "", []string{"Setup.LedgerPrefix", "the commit marks app:committed:..."}},
		{"ledger prefix holds the manifest", "app:m", nil, "", []string{"Setup.LedgerPrefix", "the ledger's manifest"}},
		{"totals hash is a fence key", "ledger:", []string{"app:fence"}, "", []string{`Setup.Keys[0] "app:fence"`, "the durability fence keys"}},
		{"totals hash among the commit marks", "ledger:", []string{"app:committed:g"}, "", []string{"Setup.Keys[0]", "the commit marks"}},
		{"totals hash inside the ledger", "ledger:", []string{"ledger:h"}, "", []string{"Setup.Keys[0]", "every ledger key"}},
		{"a fence key of its own is not under Own", "ledger:", []string{"app:fence"}, "elsewhere:fence", nil},
		{"apart", "ledger:", []string{"totals"}, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_, err := admin.Prepare(ctx, admin.Setup{Kafka: cl, Topics: []string{"orders"}, Redis: rdb, LedgerPrefix: tc.ledger,
				Keys: tc.keys, Own: "app:", Durability: admin.DurabilityConfig{FenceKey: tc.fence}})
			if tc.want == nil {
				if errors.Is(err, admin.ErrKeysCollide) {
					t.Fatalf("Prepare = %v, want the keys apart", err)
				}
				return
			}
			var ce *admin.KeysCollideError
			if !errors.Is(err, admin.ErrKeysCollide) || !errors.As(err, &ce) {
				t.Fatalf("Prepare = %v, want ErrKeysCollide", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Prepare = %v, want it to name %q", err, w)
				}
			}
		})
	}
}

// TestCollisions: keys of different settings collide when one can be the
// other (prefix over prefix either way, prefix over key, equal keys), each
// pair of settings reported once; keys of one setting and empty values are
// not compared.
func TestCollisions(t *testing.T) {
	p := func(setting, key string) admin.OwnedKey {
		return admin.OwnedKey{Setting: setting, Value: key, Key: key, Prefix: true}
	}
	k := func(setting, key string) admin.OwnedKey {
		return admin.OwnedKey{Setting: setting, Value: key, Key: key}
	}
	for _, tc := range []struct {
		name string
		keys []admin.OwnedKey
		want int
	}{
		{"prefix over prefix", []admin.OwnedKey{p("a", "x:"), p("b", "x:y:")}, 1},
		{"prefix under prefix", []admin.OwnedKey{p("a", "x:y:"), p("b", "x:")}, 1},
		{"prefix over key", []admin.OwnedKey{p("a", "x:"), k("b", "x:k")}, 1},
		{"key over prefix", []admin.OwnedKey{k("a", "x:k"), p("b", "x:")}, 1},
		{"equal keys", []admin.OwnedKey{k("a", "x"), k("b", "x")}, 1},
		{"different keys", []admin.OwnedKey{k("a", "x"), k("b", "y"), p("c", "z:")}, 0},
		{"one setting", []admin.OwnedKey{p("a", "x:"), k("a", "x:k")}, 0},
		{"empty value", []admin.OwnedKey{{Setting: "a", Key: "x:", Prefix: true}, k("b", "x:k")}, 0},
		{"one report per pair of settings", []admin.OwnedKey{p("a", "x:"), k("b", "x:1"), k("b", "x:2"), k("c", "x:3")}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := admin.Collisions(tc.keys); len(got) != tc.want {
				t.Fatalf("Collisions = %v, want %d", got, tc.want)
			}
		})
	}
}
