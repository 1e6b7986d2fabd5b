package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// TestGuardedBatch: GuardedBatch calls its effect once for each run of
// distinct keys of a batch, with every record of the run claimed, and
// lands, refuses or stops at each record as Guarded does: a record whose
// effect failed stops the batch there (the records before it applied, the
// ones after it not attempted and run again by the next Apply, those that
// landed not run again), a rejected one is its own failure, a refused key
// (ErrMisconfigured) ends the call before it.
func TestGuardedBatch(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name    string
		keys    string           // the batch's record keys, "-" for none
		foreign string           // a key holding a value that is no guard claim
		fail    map[string]error // the effect's error per key, first call only
		calls   []string         // the effect's calls, keys joined
		want    []string         // per record: applied, suppressed, failed, rejected, refused, notattempted, nokey
		again   []string         // calls of a second Apply of the same batch (same term)
	}{
		{name: "one call per run of distinct keys", keys: "a b c a d -",
			calls: []string{"a b c", "d"}, want: []string{"applied", "applied", "applied", "suppressed", "applied", "nokey"}},
		{name: "a failure stops the batch at it", keys: "a b c", fail: map[string]error{"b": boom},
			calls: []string{"a b c"}, want: []string{"applied", "failed", "notattempted"}, again: []string{"b c"}},
		{name: "a rejected record is its own failure", keys: "a b c", fail: map[string]error{"b": fmt.Errorf("%w: 422", sink.ErrRejected)},
			calls: []string{"a b c"}, want: []string{"applied", "rejected", "applied"}, again: []string{"b"}},
		{name: "a refused key ends the call before it", keys: "a b c", foreign: "b",
			calls: []string{"a"}, want: []string{"applied", "refused", "refused"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second) // a claim waiting for its own run's would hang
			defer cancel()
			g, mr := miniGuard(t)
			if tc.foreign != "" {
				mr.Set("t:"+tc.foreign, "cache:v1")
			}
			var calls []string
			first := map[string]bool{}
			a := pipeline.GuardedBatch(g, func(_ context.Context, keys []string, recs []*sink.Record) []error {
				calls = append(calls, strings.Join(keys, " "))
				errs := make([]error, len(keys))
				for i, k := range keys {
					if !first[k] {
						first[k] = true
						errs[i] = tc.fail[k]
					}
				}
				for i := range errs {
					if errs[i] != nil && !errors.Is(errs[i], sink.ErrRejected) {
						for j := i + 1; j < len(errs); j++ { // as pgeffect.DoBatch: the rest not attempted
							errs[j] = fmt.Errorf("%w: not attempted", sink.ErrNotApplied)
						}
						break
					}
				}
				return errs
			})
			var batch []sink.Record
			for i, k := range strings.Fields(tc.keys) {
				r := sink.Record{Topic: "t", Offset: int64(i), Member: "m", Epoch: 1}
				if k != "-" {
					r.Key = []byte(k)
				}
				batch = append(batch, r)
			}
			res, err := a.Apply(ctx, batch)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(calls, tc.calls) {
				t.Errorf("effect calls %q, want %q", calls, tc.calls)
			}
			for i, r := range res {
				if got := verdict(r); got != tc.want[i] {
					t.Errorf("record %d (key %q): %s (%+v), want %s", i, batch[i].Key, got, r, tc.want[i])
				}
			}
			if tc.again == nil {
				return
			}
			calls = nil
			res, err = a.Apply(ctx, batch)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(calls, tc.again) {
				t.Errorf("second Apply: effect calls %q, want %q (a landed record is not run again)", calls, tc.again)
			}
			for i, r := range res {
				if r.Err != nil && !errors.Is(r.Err, sink.ErrRejected) {
					t.Errorf("second Apply: record %d: %v", i, r.Err)
				}
			}
		})
	}
}

// verdict names what a result says of its record, in TestGuardedBatch's words.
func verdict(r sink.Result) string {
	switch {
	case errors.Is(r.Err, sink.ErrNoKey):
		return "nokey"
	case errors.Is(r.Err, sink.ErrMisconfigured):
		return "refused"
	case errors.Is(r.Err, pipeline.ErrEffectFailed) && errors.Is(r.Err, sink.ErrRejected):
		return "rejected"
	case errors.Is(r.Err, pipeline.ErrEffectFailed):
		return "failed"
	case r.Err != nil:
		return "notattempted"
	case r.Outcome == sink.Applied:
		return "applied"
	case r.Outcome == sink.Suppressed:
		return "suppressed"
	}
	return r.Outcome.String()
}

// TestGuardedBatchCrossingChains: two batches of the same keys in opposite
// orders, applied at once (re-sends spread over partitions, or two
// processes), both land: a chain holding claims does not wait for a key
// another owner holds pending (sink.WithoutWaiting) but ends before it,
// so no chain waits for one that waits for it. Each key's effect runs once.
func TestGuardedBatchCrossingChains(t *testing.T) {
	// A lease far longer than the test's bound: a chain waiting for one
	// that waits for it would stay stuck (until its first claim's effect
	// time ran out) and make no progress within the bound.
	g, _ := miniGuard(t, sink.WithLease(time.Minute))
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	var mu sync.Mutex
	ran := map[string]int{}
	a := pipeline.GuardedBatch(g, func(_ context.Context, keys []string, _ []*sink.Record) []error {
		mu.Lock()
		defer mu.Unlock()
		for _, k := range keys {
			ran[k]++
		}
		return make([]error, len(keys))
	})
	const n = 200
	batch := func(p int32, reverse bool) []sink.Record {
		b := make([]sink.Record, n)
		for i := range b {
			k := i
			if reverse {
				k = n - 1 - i
			}
			b[i] = sink.Record{Topic: "t", Partition: p, Offset: int64(i), Member: "m", Epoch: 1, Key: []byte(fmt.Sprintf("k%03d", k))}
		}
		return b
	}
	var wg sync.WaitGroup
	for p, reverse := range []bool{false, true} {
		wg.Go(func() {
			b := batch(int32(p), reverse)
			for len(b) > 0 { // as the pipeline does: land the known prefix, apply again from the first not landed
				res, err := a.Apply(ctx, b)
				if err != nil {
					t.Error(err)
					return
				}
				done := 0
				for done < len(res) && res[done].Err == nil {
					done++
				}
				if done == 0 {
					t.Errorf("partition %d: no progress at offset %d: %v", p, b[0].Offset, res[0].Err)
					return
				}
				b = b[done:]
			}
		})
	}
	wg.Wait()
	for i := range n {
		if k := fmt.Sprintf("k%03d", i); ran[k] != 1 {
			t.Errorf("key %s: effect ran %d times, want 1", k, ran[k])
		}
	}
}

// TestGuardedBatchWrongResultCount: an effect that returns the wrong
// number of results leaves every record of the call unknown (its claim kept
// pending, not taken as done), instead of panicking; the next Apply runs
// the effect again for them with the same keys.
func TestGuardedBatchWrongResultCount(t *testing.T) {
	g, _ := miniGuard(t)
	calls := 0
	a := pipeline.GuardedBatch(g, func(_ context.Context, keys []string, _ []*sink.Record) []error {
		calls++
		if calls == 1 {
			return nil
		}
		return make([]error, len(keys))
	})
	batch := []sink.Record{{Topic: "t", Offset: 0, Member: "m", Epoch: 1, Key: []byte("a")}, {Topic: "t", Offset: 1, Member: "m", Epoch: 1, Key: []byte("b")}}
	res, err := a.Apply(t.Context(), batch)
	if err != nil || !errors.Is(res[0].Err, sink.ErrUnknown) || res[1].Err == nil {
		t.Fatalf("first Apply = %+v, %v; want record 0 unknown and record 1 not attempted", res, err)
	}
	res, err = a.Apply(t.Context(), batch)
	if err != nil || res[0].Err != nil || res[1].Err != nil || res[0].Outcome != sink.Applied || res[1].Outcome != sink.Applied || calls != 2 {
		t.Fatalf("second Apply = %+v, %v after %d calls; want both applied by a second call", res, err, calls)
	}
}

// miniGuard is a Guard with key prefix "t:" (and opts) on a miniredis of
// the test's own, which it returns too.
func miniGuard(t *testing.T, opts ...sink.GuardOpt) (*sink.Guard, *miniredis.Miniredis) {
	t.Helper()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	g, err := sink.NewGuard(rdb, append([]sink.GuardOpt{sink.WithPrefix("t:")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return g, mr
}
