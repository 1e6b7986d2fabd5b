package bench

import (
	"context"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/integration"
)

// TestTableOverhead reads MEMORY STATS as Redis 7 replies, in RESP2 (an
// array) and RESP3 (a map): the main tables' overhead of every database
// and keys.count, and nothing from a reply without a database (no key
// held) or without keys.count.
func TestTableOverhead(t *testing.T) {
	db := func(main int64) []any {
		return []any{"overhead.hashtable.main", main, "overhead.hashtable.expires", int64(2800)}
	}
	tests := []struct {
		name           string
		stats          any
		overhead, keys int64
		ok             bool
	}{
		{"one db", []any{"peak.allocated", int64(5), "db.0", db(8 << 20), "keys.count", int64(989)}, 8 << 20, 989, true},
		{"two dbs", []any{"db.0", db(100), "db.3", db(50), "keys.count", int64(7)}, 150, 7, true},
		{"no key held", []any{"peak.allocated", int64(5), "keys.count", int64(0)}, 0, 0, false},
		{"no keys.count", []any{"db.0", db(100)}, 100, 0, false},
		{"RESP3", map[any]any{"keys.count": int64(12), "db.0": map[any]any{"overhead.hashtable.main": int64(4096)}}, 4096, 12, true},
		{"neither", "OK", 0, 0, false},
	}
	for _, tt := range tests {
		o, k, ok := tableOverhead(tt.stats)
		if o != tt.overhead || k != tt.keys || ok != tt.ok {
			t.Errorf("%s: tableOverhead = %d, %d, %v; want %d, %d, %v", tt.name, o, k, ok, tt.overhead, tt.keys, tt.ok)
		}
	}
	// A million slots left after the keys are gone is not shrunk; the
	// table of a million keys held is.
	if tableBound(989) >= 8<<20 || tableBound(1_000_000) < 24*1_000_000+8*(1<<20) {
		t.Errorf("tableBound(989) = %d, tableBound(1e6) = %d", tableBound(989), tableBound(1_000_000))
	}
}

// TestCleanLeavesTheTableShrunk: on the real Redis, once Clean has
// deleted a round's keys, the keyspace's table is shrunk to the keys left,
// so that the next mode grows it as every mode does (settle, shrunk).
func TestCleanLeavesTheTableShrunk(t *testing.T) {
	addr := integration.Redis(t)
	rdb, err := NewRedis(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	prefix, keep := integration.KeyPrefix(t), integration.KeyPrefix(t)+"keep:"
	// Keys of another owner stay, so that MEMORY STATS lists the database.
	for i := range 100 {
		if err := rdb.Set(ctx, keep+Key(i), "x", time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = Clean(context.Background(), addr, keep, -1) })
	const n = 500_000
	p := rdb.Pipeline()
	for i := range n {
		p.Set(ctx, prefix+Key(i), "v", time.Hour)
		if p.Len() == 10_000 {
			if _, err := p.Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := Clean(ctx, addr, prefix, n); err != nil {
		t.Fatal(err)
	}
	stats, err := rdb.Do(ctx, "MEMORY", "STATS").Result()
	if err != nil {
		t.Fatal(err)
	}
	overhead, keys, ok := tableOverhead(stats)
	if !ok || overhead > tableBound(keys) {
		t.Errorf("after Clean of %d keys: table overhead %d bytes for %d keys (read: %v), want at most %d: not shrunk",
			n, overhead, keys, ok, tableBound(keys))
	}
}
