package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
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
			mr := miniredis.RunT(t)
			rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
			t.Cleanup(func() { _ = rdb.Close() })
			if tc.foreign != "" {
				mr.Set("t:"+tc.foreign, "cache:v1")
			}
			g, err := sink.NewGuard(rdb, sink.WithPrefix("t:"))
			if err != nil {
				t.Fatal(err)
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
