package integration_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/sink"
)

// countCmds counts the commands a client sends, pipelined or not, by name.
type countCmds struct{ n, evalsha atomic.Int64 }

func (h *countCmds) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *countCmds) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.count(cmd)
		return next(ctx, cmd)
	}
}
func (h *countCmds) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			h.count(c)
		}
		return next(ctx, cmds)
	}
}
func (h *countCmds) count(cmd redis.Cmder) {
	h.n.Add(1)
	if strings.EqualFold(cmd.Name(), "evalsha") {
		h.evalsha.Add(1)
	}
}

// answer is what Apply should say of one record: its outcome, or (err set)
// an error wrapping err.
type answer struct {
	outcome sink.Outcome
	err     error
}

// applyInOneScript applies batch and checks that it went to Redis as ONE
// EVALSHA and that each record got the answer at its index in want.
func applyInOneScript(ctx context.Context, t *testing.T, rdb redis.UniversalClient, l *sink.Ledger, batch []sink.Record, want []answer) []sink.Result {
	t.Helper()
	hook := &countCmds{}
	rdb.AddHook(hook)
	res, err := l.Apply(ctx, batch)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if n, e := hook.n.Load(), hook.evalsha.Load(); n != 1 || e != 1 {
		t.Errorf("Apply sent %d commands (%d EVALSHA), want one EVALSHA for the batch", n, e)
	}
	for i, w := range want {
		got := res[i]
		if w.err != nil {
			if !errors.Is(got.Err, w.err) {
				t.Errorf("record %d (%s): Err %v, want %v", i, got.Key, got.Err, w.err)
			}
			continue
		}
		if got.Err != nil || got.Outcome != w.outcome {
			t.Errorf("record %d (%s): %v %v, want %v", i, got.Key, got.Outcome, got.Err, w.outcome)
		}
	}
	return res
}

// TestLedgerBatchScriptRealRedis: in record mode on a single Redis a batch is
// claimed by ONE command (the batch claim script), and each key still gets
// its own answer as the per-key commands gave it: a new key is applied, a
// key claimed by another group is suppressed and kept for the TTL from now
// (renewed, never shortened), a key of another type or holding a value that
// is not a claim fails alone (the rest of the batch lands), a second record
// with a key already in the batch is suppressed, and a replay of the batch
// by the same term finds its own claims (Applied again, nothing rewritten).
func TestLedgerBatchScriptRealRedis(t *testing.T) {
	t.Parallel()
	rdb := integration.NewRedisClient(t, integration.Redis(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prefix := integration.RedisPrefix(t, rdb) + "l:"
	other := sink.Claim{Topic: "orders", Partition: 3, Offset: 99, Epoch: 1, Group: "other",
		At: time.Now().UTC(), State: sink.ClaimApplied}
	if err := rdb.Set(ctx, prefix+"held", other.Encode(), 10*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.HSet(ctx, prefix+"hash", "x", "1").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(ctx, prefix+"junk", "not a claim", 0).Err(); err != nil {
		t.Fatal(err)
	}
	l, err := sink.NewLedger(rdb, sink.WithPrefix(prefix), sink.WithTTL(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	keys := []string{"new1", "held", "hash", "junk", "new1", "new2"}
	batch := make([]sink.Record, len(keys))
	for i, k := range keys {
		batch[i] = sink.Record{Topic: "orders", Partition: 0, Offset: int64(10 + i), Epoch: 4, Member: "m", Group: "g", Key: []byte(k)}
	}
	res := applyInOneScript(ctx, t, rdb, l, batch, []answer{{sink.Applied, nil}, {sink.Suppressed, nil},
		{0, sink.ErrMisconfigured}, {0, sink.ErrBadClaim}, {sink.Suppressed, nil}, {sink.Applied, nil}})
	for i, r := range res {
		if r.Key != keys[i] {
			t.Errorf("record %d: Key %q, want %q", i, r.Key, keys[i])
		}
	}
	if ttl := rdb.PTTL(ctx, prefix+"held").Val(); ttl < 30*time.Minute {
		t.Errorf("the suppressed key's TTL is %v: not renewed to the ledger's hour", ttl)
	}
	if typ := rdb.Type(ctx, prefix+"hash").Val(); typ != "hash" {
		t.Errorf("the key of another type is now a %s", typ)
	}
	if v := rdb.Get(ctx, prefix+"junk").Val(); v != "not a claim" {
		t.Errorf("the foreign value became %q", v)
	}
	for _, k := range []string{"new1", "new2"} {
		c, ok, err := l.Lookup(ctx, k)
		i := map[string]int{"new1": 0, "new2": 5}[k]
		if err != nil || !ok || !c.Names(&batch[i]) {
			t.Errorf("claim of %s = %+v %v %v, want one naming offset %d", k, c, ok, err, batch[i].Offset)
		}
	}
	stored := rdb.Get(ctx, prefix+"new1").Val()
	again, err := l.Apply(ctx, batch)
	if err != nil {
		t.Fatalf("Apply again: %v", err)
	}
	if again[0].Outcome != sink.Applied || again[5].Outcome != sink.Applied {
		t.Errorf("the same term's retry: %v and %v, want its own claims Applied", again[0].Outcome, again[5].Outcome)
	}
	if v := rdb.Get(ctx, prefix+"new1").Val(); v != stored {
		t.Errorf("the retry rewrote the claim: %q, was %q", v, stored)
	}
}

// TestLedgerApplyAllocs: the record-mode ledger allocates per batch, not per
// record: building the batch's keys, claims and command, and reading its
// answers, costs well under one allocation per record on a real Redis
// (before the batch claim script it was about twelve: a go-redis command
// object, its argument slice and boxed arguments, the key and claim
// strings, for each of two commands per record). Not parallel: it counts
// every allocation of the process.
func TestLedgerApplyAllocs(t *testing.T) {
	rdb := integration.NewRedisClient(t, integration.Redis(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prefix := integration.RedisPrefix(t, rdb)
	l, err := sink.NewLedger(rdb, sink.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	const size, runs = 100, 20
	batches := make([][]sink.Record, runs+1) // AllocsPerRun calls once more to warm up
	for b := range batches {
		batches[b] = make([]sink.Record, size)
		for i := range batches[b] {
			off := int64(b*size + i)
			batches[b][i] = sink.Record{Topic: "orders", Partition: 1, Offset: off, Epoch: 2, Member: "m", Group: "g",
				Key: fmt.Appendf(nil, "order-%06d", off)}
		}
	}
	next := 0
	var failed error
	perBatch := testing.AllocsPerRun(runs, func() {
		res, err := l.Apply(ctx, batches[next])
		next++
		if err == nil && res[size-1].Outcome != sink.Applied {
			err = fmt.Errorf("last record %v, want applied", res[size-1].Outcome)
		}
		if err != nil && failed == nil {
			failed = err
		}
	})
	if failed != nil {
		t.Fatal(failed)
	}
	perRecord := perBatch / size
	t.Logf("Apply of %d new keys: %.0f allocations per batch, %.2f per record", size, perBatch, perRecord)
	if perRecord > 0.5 {
		t.Errorf("Apply allocates %.2f times per record (%.0f per batch of %d), want at most 0.5", perRecord, perBatch, size)
	}
}

// TestLedgerBatchEffectRealRedis: with the totals effect a batch is ONE
// command too (the batch script runs each record's effect, then writes its
// claim), and a record whose effect fails fails alone, with nothing written
// for it: an amount that would overflow its group's total, a ledger key of
// another type. The other records' amounts are added exactly once: a second
// Apply of the same batch by another group suppresses every record and the
// totals do not move.
func TestLedgerBatchEffectRealRedis(t *testing.T) {
	t.Parallel()
	rdb := integration.NewRedisClient(t, integration.Redis(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prefix := integration.RedisPrefix(t, rdb)
	hash := prefix + "totals"
	if err := rdb.HSet(ctx, hash, "big", "9223372036854775800").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.HSet(ctx, prefix+"l:o4", "x", "1").Err(); err != nil {
		t.Fatal(err)
	}
	l, err := sink.NewLedger(rdb, sink.WithPrefix(prefix+"l:"),
		sink.WithEffect(sink.Totals{Hash: hash, GroupField: "customer", AmountField: "amount_cents"}))
	if err != nil {
		t.Fatal(err)
	}
	orders := []struct {
		key, customer string
		amount        int
	}{
		{"o1", "a", 100}, {"o2", "b", 7}, {"o3", "big", 10}, {"o4", "a", 1000}, {"o5", "a", 20}, {"o1", "a", 100},
	}
	batch := make([]sink.Record, len(orders))
	for i, o := range orders {
		batch[i] = sink.Record{Topic: "orders", Offset: int64(i), Epoch: 1, Group: "g", Key: []byte(o.key),
			Value: fmt.Appendf(nil, `{"customer":%q,"amount_cents":%d}`, o.customer, o.amount)}
	}
	applyInOneScript(ctx, t, rdb, l, batch, []answer{{sink.Applied, nil}, {sink.Applied, nil}, {0, sink.ErrBadValue},
		{0, sink.ErrMisconfigured}, {sink.Applied, nil}, {sink.Suppressed, nil}})
	if n := rdb.Exists(ctx, prefix+"l:o3").Val(); n != 0 {
		t.Error("the record whose amount overflowed was claimed")
	}
	wantTotals := map[string]string{"a": "120", "b": "7", "big": "9223372036854775800"}
	check := func(when string) {
		t.Helper()
		got := rdb.HGetAll(ctx, hash).Val()
		for k, v := range wantTotals {
			if got[k] != v {
				t.Errorf("%s: total of %s = %q, want %s (all: %v)", when, k, got[k], v, got)
			}
		}
	}
	check("after the batch")
	for i := range batch {
		batch[i].Group = "replay:x"
	}
	again, err := l.Apply(ctx, batch)
	if err != nil {
		t.Fatalf("Apply again: %v", err)
	}
	for _, i := range []int{0, 1, 4, 5} {
		if again[i].Outcome != sink.Suppressed || again[i].Err != nil {
			t.Errorf("replay of record %d: %v %v, want suppressed", i, again[i].Outcome, again[i].Err)
		}
	}
	check("after a replay by another group")
}

// manyArgs is an effect that counts its records in one key and passes a
// record keyed "big" more arguments than Lua can unpack at once.
type manyArgs struct{ counter string }

func (manyArgs) Lua() string { return "redis.call('INCR', KEYS[1])" }

func (m manyArgs) Args(r *sink.Record, key string) ([]string, []any, error) {
	n := 1
	if key == "big" {
		n = 9000
	}
	return []string{m.counter}, make([]any, n), nil
}

// TestLedgerBatchEffectFailsOneRecord: a record whose effect cannot even be
// called (more arguments than Lua unpacks) fails alone: the records before
// and after it in the batch land once and are reported applied, and it is
// not claimed.
func TestLedgerBatchEffectFailsOneRecord(t *testing.T) {
	t.Parallel()
	rdb := integration.NewRedisClient(t, integration.Redis(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prefix := integration.RedisPrefix(t, rdb)
	l, err := sink.NewLedger(rdb, sink.WithPrefix(prefix+"l:"), sink.WithEffect(manyArgs{counter: prefix + "n"}))
	if err != nil {
		t.Fatal(err)
	}
	var batch []sink.Record
	for i, k := range []string{"small", "big", "small2"} {
		batch = append(batch, sink.Record{Topic: "orders", Offset: int64(i), Epoch: 1, Group: "g", Key: []byte(k)})
	}
	res, err := l.Apply(ctx, batch)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	for i, want := range []bool{true, false, true} {
		if applied := res[i].Err == nil && res[i].Outcome == sink.Applied; applied != want {
			t.Errorf("record %d (%s): %v %v, want applied=%v", i, res[i].Key, res[i].Outcome, res[i].Err, want)
		}
	}
	if n := rdb.Get(ctx, prefix+"n").Val(); n != "2" {
		t.Errorf("the effect ran %s times, want 2", n)
	}
	if rdb.Exists(ctx, prefix+"l:big").Val() != 0 {
		t.Error("the record whose effect failed was claimed")
	}
}
