package pipeline_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// TestGuardedResultsNameTheKey: every result of a guarded batch names its
// business key, whether the effect ran (applied) or not (redelivered: the
// same records under another term, or a bad record), so callers can account
// per key.
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
	}{{"m1", sink.Applied}, {"m2", sink.Redelivered}} {
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

// TestGuardedForeignValue: a guard key that holds something other than a
// guard claim refuses its record with ErrMisconfigured (not a suppression,
// not an unknown batch): the records before it keep their outcomes, so the
// pipeline lands and commits them and stops at the refused one, and no
// effect runs from it on.
func TestGuardedForeignValue(t *testing.T) {
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	g, err := sink.NewGuard(rdb, sink.WithPrefix("t:"))
	if err != nil {
		t.Fatal(err)
	}
	mr.Set("t:b", "cache:v1")
	ran := map[string]int{}
	a := pipeline.Guarded(g, func(_ context.Context, key string, _ *sink.Record) error { ran[key]++; return nil })
	res, err := a.Apply(t.Context(), []sink.Record{
		{Topic: "t", Offset: 0, Epoch: 1, Key: []byte("a")},
		{Topic: "t", Offset: 1, Epoch: 1, Key: []byte("b")},
		{Topic: "t", Offset: 2, Epoch: 1, Key: []byte("c")},
	})
	if err != nil {
		t.Fatalf("Apply = %v, want per-record results", err)
	}
	if res[0].Err != nil || res[0].Outcome != sink.Applied {
		t.Errorf("record before the foreign key: %+v, want applied", res[0])
	}
	if !errors.Is(res[1].Err, sink.ErrMisconfigured) || !errors.Is(res[1].Err, sink.ErrBadClaim) {
		t.Errorf("record at the foreign key: %+v, want ErrMisconfigured and ErrBadClaim", res[1])
	}
	if res[2].Err == nil {
		t.Errorf("record after it: %+v, want an error (not attempted)", res[2])
	}
	if ran["a"] != 1 || ran["b"] != 0 || ran["c"] != 0 {
		t.Errorf("effect ran %v, want only a", ran)
	}
}

// TestGuardedRedactsEffectURLs: an effect's error that names a URL (a
// *url.Error, as net/http's are) reaches the record's error, and so the
// logs, traces, /status and dead-letter headers built from it, without the
// URL's password or query values (secure.RedactError).
func TestGuardedRedactsEffectURLs(t *testing.T) {
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	g, err := sink.NewGuard(rdb, sink.WithPrefix("t:"))
	if err != nil {
		t.Fatal(err)
	}
	effErr := &url.Error{Op: "Post", URL: "https://u:pw9@h/charge?token=tok9", Err: errors.New("connection reset")}
	a := pipeline.Guarded(g, func(context.Context, string, *sink.Record) error { return effErr })
	res, err := a.Apply(t.Context(), []sink.Record{{Topic: "t", Epoch: 1, Key: []byte("a")}})
	if err == nil && len(res) == 1 {
		err = res[0].Err // a failure part-way is the record's result (the records before it land)
	}
	if err == nil || strings.Contains(err.Error(), "tok9") || strings.Contains(err.Error(), "pw9") ||
		!strings.Contains(err.Error(), "token=") || !errors.Is(err, effErr) {
		t.Fatalf("Apply: %v; want the effect's error wrapped, naming the option token but not its value nor the password", err)
	}
}
