package pipeline_test

import (
	"context"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// TestGuardedResultsNameTheKey: every result of a guarded batch names its
// business key, whether the effect ran (applied) or not (suppressed, or a
// bad record), so callers can account per key.
func TestGuardedResultsNameTheKey(t *testing.T) {
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	g, err := sink.NewGuard(rdb, sink.WithPrefix("t:"))
	if err != nil {
		t.Fatal(err)
	}
	ran := map[string]int{}
	a := pipeline.Guarded(g, func(_ context.Context, key string, _ *sink.Record) error { ran[key]++; return nil })
	batch := func(member string) []sink.Record {
		return []sink.Record{
			{Topic: "t", Offset: 0, Member: member, Epoch: 1, Key: []byte("a")},
			{Topic: "t", Offset: 1, Member: member, Epoch: 1, Key: []byte("b")},
			{Topic: "t", Offset: 2, Member: member, Epoch: 1}, // no key
		}
	}
	for _, tc := range []struct {
		member string
		want   sink.Outcome
	}{{"m1", sink.Applied}, {"m2", sink.Suppressed}} {
		res, err := a.Apply(t.Context(), batch(tc.member))
		if err != nil {
			t.Fatal(err)
		}
		for i, k := range []string{"a", "b"} {
			if res[i].Key != k || res[i].Outcome != tc.want || res[i].Err != nil {
				t.Errorf("%s: result %d = %+v, want key %q %v", tc.member, i, res[i], k, tc.want)
			}
		}
		if res[2].Err == nil {
			t.Errorf("%s: a record without a key gave %+v, want an error", tc.member, res[2])
		}
	}
	if ran["a"] != 1 || ran["b"] != 1 {
		t.Errorf("effect ran %v, want once per key", ran)
	}
}
