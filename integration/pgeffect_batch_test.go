package integration_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/faults"
	"github.com/shardpipe/shardpipe/pgeffect"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// countingDB counts the transactions begun on its pool.
type countingDB struct {
	*pgxpool.Pool
	begins *atomic.Int32
}

func (d countingDB) Begin(ctx context.Context) (pgx.Tx, error) {
	d.begins.Add(1)
	return d.Pool.Begin(ctx)
}

// TestPgEffectBatchOneTransaction: GuardedBatch with DoBatch applies a
// batch of distinct orders in one transaction; a batch holding each order
// twice (re-sends) in two, the second finding every key done; the orders
// table, with no unique constraint, holds one row per order, and a replay
// under a later term begins no transaction at all.
func TestPgEffectBatchOneTransaction(t *testing.T) {
	t.Parallel()
	var begins atomic.Int32
	f := newPgFixtureOn(t, func(p *pgxpool.Pool) pgeffect.DB { return countingDB{Pool: p, begins: &begins} })
	rdb := integration.NewRedisClient(t, integration.Redis(t))
	g, err := sink.NewGuard(rdb, sink.WithPrefix(integration.RedisPrefix(t, rdb)))
	if err != nil {
		t.Fatal(err)
	}
	ap := pipeline.GuardedBatch(g, f.eff.DoBatch)
	ctx := context.Background()
	const orders = 50
	var batch []sink.Record
	for i := range orders {
		batch = append(batch, sinkOrder(0, int64(i), 1, fmt.Sprintf("o%d", i), "c", int64(i+1)))
	}
	for i := range orders { // the re-sends
		batch = append(batch, sinkOrder(0, int64(orders+i), 1, fmt.Sprintf("o%d", i), "c", int64(i+1)))
	}
	for _, tt := range []struct {
		epoch  int64
		want   sink.Outcome
		begins int32
	}{{1, sink.Applied, 1}, {2, sink.Redelivered, 0}} {
		begins.Store(0)
		for i := range batch {
			batch[i].Epoch = tt.epoch
		}
		rs, err := ap.Apply(ctx, batch)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range rs {
			want := tt.want
			if i >= orders {
				want = sink.Suppressed // the key was done by the order's first record
			}
			if r.Err != nil || r.Outcome != want {
				t.Fatalf("epoch %d record %d: %v, %v; want %v", tt.epoch, i, r.Outcome, r.Err, want)
			}
		}
		if n := begins.Load(); n != tt.begins {
			t.Errorf("epoch %d: %d transactions for %d records, want %d", tt.epoch, n, len(batch), tt.begins)
		}
	}
	if n, works := f.rows(t, ""), f.works.Load(); n != orders || works != orders {
		t.Fatalf("orders table holds %d rows after %d Works, want %d and %d", n, works, orders, orders)
	}
}

// TestPgEffectBatchFailures: in one batch transaction, a record failing the
// table's CHECK is left out (rejected, its inbox row rolled back) and the
// others land; a record whose Work fails otherwise ends the batch there:
// the records before it commit, those after it are not attempted, and a
// retry of the batch lands them without running a landed Work again.
func TestPgEffectBatchFailures(t *testing.T) {
	t.Parallel()
	var refuse atomic.Bool
	refuse.Store(true)
	f := newPgFixture(t)
	eff, err := pgeffect.New(f.pool, f.inbox, func(ctx context.Context, tx pgx.Tx, key string, r *sink.Record) error {
		if key == "o6" && refuse.Load() {
			return errors.New("injected: lock timeout")
		}
		var cents int64
		if key == "o2" {
			cents = -1 // fails the CHECK: the record's own fault
		} else {
			cents = 10
		}
		f.works.Add(1)
		_, err := tx.Exec(ctx, "INSERT INTO "+f.orders+" VALUES ($1, 'c', $2)", key, cents)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	rdb := integration.NewRedisClient(t, integration.Redis(t))
	g, err := sink.NewGuard(rdb, sink.WithPrefix(integration.RedisPrefix(t, rdb)))
	if err != nil {
		t.Fatal(err)
	}
	ap := pipeline.GuardedBatch(g, eff.DoBatch)
	var batch []sink.Record
	for i := range 10 {
		batch = append(batch, sinkOrder(0, int64(i), 1, fmt.Sprintf("o%d", i), "c", 10))
	}
	rs, err := ap.Apply(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rs {
		var ok bool
		switch {
		case i == 2:
			ok = errors.Is(r.Err, sink.ErrRejected) && errors.Is(r.Err, pipeline.ErrEffectFailed)
		case i == 6:
			ok = errors.Is(r.Err, pipeline.ErrEffectFailed) && !errors.Is(r.Err, sink.ErrRejected)
		case i > 6:
			ok = r.Err != nil && !errors.Is(r.Err, pipeline.ErrEffectFailed)
		default:
			ok = r.Err == nil && r.Outcome == sink.Applied
		}
		if !ok {
			t.Errorf("record %d: %v, %v", i, r.Outcome, r.Err)
		}
	}
	if n := f.rows(t, ""); n != 5 {
		t.Fatalf("after the first Apply the orders table holds %d rows, want 5 (o0 o1 o3 o4 o5)", n)
	}
	if f.inInbox(t, "o2") || f.inInbox(t, "o6") {
		t.Fatal("a record that failed left its key in the inbox")
	}
	refuse.Store(false)
	works := f.works.Load()
	rs, err = ap.Apply(context.Background(), batch[3:]) // the pipeline's retry from the first record not landed
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rs {
		if r.Err != nil || r.Outcome != sink.Applied {
			t.Errorf("retry record %d: %v, %v", i+3, r.Outcome, r.Err)
		}
	}
	if n, ran := f.rows(t, ""), f.works.Load()-works; n != 9 || ran != 4 {
		t.Fatalf("after the retry %d rows and %d Works run, want 9 and 4 (o6 to o9)", n, ran)
	}
}

// TestPgEffectBatchCrashAfterCommit: a crash after the batch's COMMIT and
// before one record's done mark (the guard's AfterEffect point) leaves
// that claim pending; the next owner waits out its lease and finds the key
// in the inbox, so its Work is not run again.
func TestPgEffectBatchCrashAfterCommit(t *testing.T) {
	t.Parallel()
	f := newPgFixture(t)
	rdb := integration.NewRedisClient(t, integration.Redis(t))
	g, err := sink.NewGuard(rdb, sink.WithPrefix(integration.RedisPrefix(t, rdb)), sink.WithLease(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ap := pipeline.GuardedBatch(g, f.eff.DoBatch)
	var batch []sink.Record
	for i := range 5 {
		batch = append(batch, sinkOrder(0, int64(i), 1, fmt.Sprintf("o%d", i), "c", 10))
	}
	crash := errors.New("injected crash after COMMIT, before the done mark")
	ctx := faults.WithGuard(context.Background(), faults.Guard{AfterEffect: func(_ context.Context, key string) error {
		if key == "o2" {
			return crash
		}
		return nil
	}})
	rs, err := ap.Apply(ctx, batch)
	if err != nil || !errors.Is(rs[2].Err, crash) {
		t.Fatalf("first Apply = %v, %v; want record 2 crashed", rs, err)
	}
	for i := range batch {
		batch[i].Epoch = 2 // the next owner
	}
	rs, err = ap.Apply(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rs {
		want := sink.Redelivered
		if i == 2 {
			want = sink.Applied // claimed anew once the crashed claim's lease lapsed
		}
		if r.Err != nil || r.Outcome != want {
			t.Errorf("next owner, record %d: %v, %v; want %v", i, r.Outcome, r.Err, want)
		}
	}
	if works, rows := f.works.Load(), f.rows(t, ""); works != 5 || rows != 5 {
		t.Fatalf("the Work ran %d times and left %d rows; want 5 and 5", works, rows)
	}
}

// TestPgEffectBatchLeavesOutEachAlone: in one DoBatch, records PostgreSQL
// refuses for their data are each left out with their own error and the
// others land, each Work running at most twice however many are refused
// (the records before a refusal commit in a transaction of their own, the
// rest go on in another); a key the inbox cannot store (a NUL byte), which
// fails the batch's one inbox INSERT, is refused alone once the batch runs
// a record at a time.
func TestPgEffectBatchLeavesOutEachAlone(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		n    int
		bad  func(i int) (key string, cents int64, refused bool)
	}{
		{"every other fails the CHECK", 40, func(i int) (string, int64, bool) {
			if i%2 == 1 {
				return fmt.Sprintf("o%d", i), -1, true
			}
			return fmt.Sprintf("o%d", i), 10, false
		}},
		{"a key the inbox cannot store", 8, func(i int) (string, int64, bool) {
			if i == 3 {
				return "o3\x00nul", 10, true
			}
			return fmt.Sprintf("o%d", i), 10, false
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newPgFixture(t)
			var keys []string
			var recs []*sink.Record
			refused := map[int]bool{}
			for i := range tt.n {
				key, cents, bad := tt.bad(i)
				r := sinkOrder(0, int64(i), 1, key, "c", cents)
				keys, recs, refused[i] = append(keys, key), append(recs, &r), bad
			}
			errs := f.eff.DoBatch(context.Background(), keys, recs)
			good := 0
			for i, err := range errs {
				switch {
				case refused[i] && !errors.Is(err, sink.ErrRejected):
					t.Errorf("record %d (key %q): %v, want one wrapping sink.ErrRejected", i, keys[i], err)
				case !refused[i] && err != nil:
					t.Errorf("record %d: %v, want landed", i, err)
				case !refused[i]:
					good++
				}
			}
			if rows := f.rows(t, ""); rows != good {
				t.Errorf("orders table holds %d rows, want %d", rows, good)
			}
			if works := f.works.Load(); works > int32(2*tt.n) {
				t.Errorf("the Work ran %d times for %d records, want at most twice each", works, tt.n)
			}
		})
	}
}
