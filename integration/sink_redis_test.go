package integration_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/faults"
	"github.com/shardpipe/shardpipe/sink"
)

// These tests check the sink's claims about real Redis: SET NX GET and the
// claim scripts, real TTLs and lease expiry, NOSCRIPT recovery, and
// exactly-once under concurrent, overlapping appliers.

func sinkOrder(p int32, off, epoch int64, id, customer string, cents int64) sink.Record {
	return sink.Record{
		Topic: "orders", Partition: p, Offset: off, Epoch: epoch, Key: []byte(id),
		Value: fmt.Appendf(nil, `{"customer":%q,"amount_cents":%d}`, customer, cents),
	}
}

func TestSinkLedgerRealRedis(t *testing.T) {
	t.Parallel()
	rdb := integration.NewRedisClient(t, integration.Redis(t))
	prefix := integration.RedisPrefix(t, rdb)
	ctx := context.Background()
	l, err := sink.NewLedger(rdb, sink.WithPrefix(prefix), sink.WithTTL(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	batch := []sink.Record{sinkOrder(0, 0, 1, "o1", "a", 1), sinkOrder(0, 1, 1, "o2", "a", 1), sinkOrder(0, 2, 1, "o1", "a", 1)}
	rs, err := l.Apply(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	if rs[0].Outcome != sink.Applied || rs[1].Outcome != sink.Applied || rs[2].Outcome != sink.Suppressed {
		t.Fatalf("results %+v", rs)
	}
	ttl, err := rdb.TTL(ctx, prefix+"o1").Result()
	if err != nil || ttl <= 59*time.Minute || ttl > time.Hour {
		t.Errorf("TTL = %v, %v; want about 1h", ttl, err)
	}
	cl, ok, err := l.Lookup(ctx, "o1")
	if err != nil || !ok || !cl.Names(&batch[0]) {
		t.Errorf("Lookup = %+v %v %v", cl, ok, err)
	}
	// The same record under the same epoch (a retry whose reply was lost)
	// counts as applied; under a new epoch (a replay) as redelivered; read
	// by another group, as suppressed.
	again := batch[0]
	rs, _ = l.Apply(ctx, []sink.Record{again})
	again.Epoch = 2
	rs2, _ := l.Apply(ctx, []sink.Record{again})
	again.Group = "other"
	rs3, _ := l.Apply(ctx, []sink.Record{again})
	if rs[0].Outcome != sink.Applied || rs2[0].Outcome != sink.Redelivered || rs3[0].Outcome != sink.Suppressed {
		t.Errorf("same epoch %v, new epoch %v, other group %v", rs[0].Outcome, rs2[0].Outcome, rs3[0].Outcome)
	}
}

// uniqueTotals is Totals with a Lua body unique to this run, so its script
// is new to the server and the first EVALSHA meets NOSCRIPT.
type uniqueTotals struct {
	sink.Totals
	tag string
}

func (u uniqueTotals) Lua() string { return u.Totals.Lua() + " -- " + u.tag }

func TestSinkTotalsConcurrentRealRedis(t *testing.T) {
	t.Parallel()
	rdb := integration.NewRedisClient(t, integration.Redis(t))
	prefix := integration.RedisPrefix(t, rdb) + "{ledger}:" // one slot, as on Cluster
	ctx := context.Background()
	effect := uniqueTotals{sink.Totals{Hash: prefix + "totals", GroupField: "customer", AmountField: "amount_cents"}, rand.Text()}
	l, err := sink.NewLedger(rdb, sink.WithPrefix(prefix), sink.WithEffect(effect))
	if err != nil {
		t.Fatal(err)
	}
	const orders, workers = 2000, 6
	want := map[string]int64{}
	for i := range orders {
		want["c"+strconv.Itoa(i%13)] += int64(i)
	}
	// Every worker applies every order (overlapping replays with their own
	// epochs, in batches of 50, in different orders).
	var applied, suppressed atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for start := 0; start < orders; start += 50 {
				batch := make([]sink.Record, 0, 50)
				for j := range 50 {
					i := (start + j + w*331) % orders
					batch = append(batch, sinkOrder(0, int64(i), int64(w+1), "o"+strconv.Itoa(i), "c"+strconv.Itoa(i%13), int64(i)))
				}
				rs, err := l.Apply(ctx, batch)
				if err != nil {
					t.Error(err)
					return
				}
				for _, r := range rs {
					switch {
					case r.Err != nil:
						t.Error(r.Err)
					case r.Outcome == sink.Applied:
						applied.Add(1)
					default:
						suppressed.Add(1)
					}
				}
			}
		})
	}
	wg.Wait()
	if applied.Load() != orders || suppressed.Load() != orders*(workers-1) {
		t.Errorf("applied=%d suppressed=%d, want %d and %d", applied.Load(), suppressed.Load(), orders, orders*(workers-1))
	}
	got, err := rdb.HGetAll(ctx, prefix+"totals").Result()
	if err != nil {
		t.Fatal(err)
	}
	for c, sum := range want {
		if got[c] != strconv.FormatInt(sum, 10) {
			t.Errorf("total %s = %s, want %d", c, got[c], sum)
		}
	}
	t.Logf("orders=%d workers=%d applied=%d suppressed=%d", orders, workers, applied.Load(), suppressed.Load())
}

func TestSinkWrongTypeLeavesNoClaimRealRedis(t *testing.T) {
	t.Parallel()
	rdb := integration.NewRedisClient(t, integration.Redis(t))
	prefix := integration.RedisPrefix(t, rdb)
	ctx := context.Background()
	if err := rdb.Set(ctx, prefix+"totals", "a string", 0).Err(); err != nil {
		t.Fatal(err)
	}
	l, err := sink.NewLedger(rdb, sink.WithPrefix(prefix),
		sink.WithEffect(sink.Totals{Hash: prefix + "totals", GroupField: "customer", AmountField: "amount_cents"}))
	if err != nil {
		t.Fatal(err)
	}
	rs, err := l.Apply(ctx, []sink.Record{sinkOrder(0, 0, 1, "o1", "a", 5)})
	if err != nil {
		t.Fatal(err)
	}
	if rs[0].Err == nil {
		t.Fatal("HINCRBY on a string did not fail")
	}
	if n, _ := rdb.Exists(ctx, prefix+"o1").Result(); n != 0 {
		t.Error("the failed effect left its claim: Redis does not roll back, the effect must fail first")
	}
}

func TestSinkGuardLeaseRealRedis(t *testing.T) {
	t.Parallel()
	rdb := integration.NewRedisClient(t, integration.Redis(t))
	prefix := integration.RedisPrefix(t, rdb)
	ctx := context.Background()
	const lease = 300 * time.Millisecond
	retry := sink.WithRetry(sink.Backoff{Initial: 10 * time.Millisecond, Max: 50 * time.Millisecond, Attempts: 5})
	crash := errors.New("crash")
	var runs atomic.Int32
	effect := func(context.Context, string) error { runs.Add(1); return nil }

	for _, tt := range []struct {
		name     string
		points   faults.Guard
		wantRuns int32 // after the crash and the replay
	}{
		{"crash after claim: runs once after the lease", faults.Guard{AfterClaim: func(context.Context, string) error { return crash }}, 1},
		{"crash after effect: the documented window runs it twice", faults.Guard{AfterEffect: func(context.Context, string) error { return crash }}, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			runs.Store(0)
			p := prefix + strconv.Itoa(int(tt.wantRuns)) + ":"
			crashing, err := sink.NewGuard(rdb, sink.WithPrefix(p), sink.WithLease(lease), retry)
			if err != nil {
				t.Fatal(err)
			}
			g, _ := sink.NewGuard(rdb, sink.WithPrefix(p), sink.WithLease(lease), retry)
			r := sinkOrder(0, 1, 1, "o1", "a", 1)
			if _, err := crashing.Do(faults.WithGuard(ctx, tt.points), &r, effect); !errors.Is(err, crash) {
				t.Fatalf("crash Do: %v", err)
			}
			pttl, _ := rdb.PTTL(ctx, p+"o1").Result()
			if pttl <= 0 || pttl > lease {
				t.Errorf("pending claim PTTL %v, want within the lease %v", pttl, lease)
			}
			r.Epoch = 2
			start := time.Now()
			out, err := g.Do(ctx, &r, effect)
			if err != nil || out != sink.Applied {
				t.Fatalf("replay = %v, %v", out, err)
			}
			if waited := time.Since(start); waited < lease/2 {
				t.Errorf("replay ran after %v, before the lease could lapse", waited)
			}
			r.Epoch = 3
			if out, _ := g.Do(ctx, &r, effect); out != sink.Redelivered {
				t.Errorf("third Do = %v, want redelivered", out)
			}
			if runs.Load() != tt.wantRuns {
				t.Errorf("effect ran %d times, want %d", runs.Load(), tt.wantRuns)
			}
		})
	}
}
