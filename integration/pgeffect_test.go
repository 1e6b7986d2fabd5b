package integration_test

import (
	"context"
	"encoding/json"
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

// pgFixture is a Guard on the real Redis and a pgeffect.Effect on the real
// PostgreSQL whose Work inserts each order into a table of its own with no
// unique constraint (so a second run of the Work shows as a second row) and
// a CHECK that amount_cents is positive.
type pgFixture struct {
	pool          *pgxpool.Pool
	orders, inbox string
	eff           *pgeffect.Effect
	works         atomic.Int32
}

func newPgFixture(t *testing.T, opts ...pgeffect.Opt) *pgFixture {
	t.Helper()
	return newPgFixtureOn(t, nil, opts...)
}

// newPgFixtureOn is newPgFixture with the effect on wrap(pool) when wrap
// is not nil.
func newPgFixtureOn(t *testing.T, wrap func(*pgxpool.Pool) pgeffect.DB, opts ...pgeffect.Opt) *pgFixture {
	t.Helper()
	ctx := context.Background()
	pool := integration.NewPostgresPool(t, integration.Postgres(t))
	var db pgeffect.DB = pool
	if wrap != nil {
		db = wrap(pool)
	}
	f := &pgFixture{pool: pool, orders: integration.PostgresTable(t, pool), inbox: integration.PostgresTable(t, pool)}
	if _, err := pool.Exec(ctx, "CREATE TABLE "+f.orders+" (order_id text NOT NULL, customer text NOT NULL, amount_cents bigint NOT NULL CHECK (amount_cents > 0))"); err != nil {
		t.Fatal(err)
	}
	eff, err := pgeffect.New(db, f.inbox, func(ctx context.Context, tx pgx.Tx, key string, r *sink.Record) error {
		f.works.Add(1)
		var o struct {
			Customer    string `json:"customer"`
			AmountCents int64  `json:"amount_cents"`
		}
		if err := json.Unmarshal(r.Value, &o); err != nil {
			return fmt.Errorf("%w: %w", sink.ErrBadValue, err)
		}
		_, err := tx.Exec(ctx, "INSERT INTO "+f.orders+" VALUES ($1, $2, $3)", key, o.Customer, o.AmountCents)
		return err
	}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := eff.EnsureInbox(ctx); err != nil {
		t.Fatal(err)
	}
	f.eff = eff
	return f
}

// rows counts the orders table's rows for order id (all when id is "").
func (f *pgFixture) rows(t *testing.T, id string) int {
	t.Helper()
	var n int
	if err := f.pool.QueryRow(context.Background(), "SELECT count(*) FROM "+f.orders+" WHERE $1 = '' OR order_id = $1", id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// inInbox reports whether the inbox holds key.
func (f *pgFixture) inInbox(t *testing.T, key string) bool {
	t.Helper()
	var n int
	if err := f.pool.QueryRow(context.Background(), "SELECT count(*) FROM "+f.inbox+" WHERE key = $1", key).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// TestPgEffectAppliesEachOrderOnce applies a batch holding re-sends of its
// orders through guard mode and the inbox, then the same records again
// under a later term (a replay): the orders table, which has no unique
// constraint, holds one row per order.
func TestPgEffectAppliesEachOrderOnce(t *testing.T) {
	t.Parallel()
	f := newPgFixture(t)
	rdb := integration.NewRedisClient(t, integration.Redis(t))
	g, err := sink.NewGuard(rdb, sink.WithPrefix(integration.RedisPrefix(t, rdb)))
	if err != nil {
		t.Fatal(err)
	}
	const orders = 20
	var batch []sink.Record
	for i := range 2 * orders { // each order twice: a re-send at a later offset
		batch = append(batch, sinkOrder(0, int64(i), 1, fmt.Sprintf("o%d", i%orders), "c", int64(i%orders+1)))
	}
	ap := pipeline.Guarded(g, f.eff.Do)
	ctx := context.Background()
	for _, epoch := range []int64{1, 2} {
		for i := range batch {
			batch[i].Epoch = epoch
		}
		rs, err := ap.Apply(ctx, batch)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range rs {
			if r.Err != nil {
				t.Fatalf("epoch %d record %d: %v", epoch, i, r.Err)
			}
		}
	}
	if n := f.rows(t, ""); n != orders {
		t.Fatalf("orders table holds %d rows, want %d (one per order)", n, orders)
	}
}

// TestPgEffectInboxHoldsKey: when the Work committed but Redis does not say
// the key is done (a crash between COMMIT and the done mark, or the claim
// gone), the next owner's effect finds the key in the inbox and the Work
// does not run again. Guard mode alone runs it twice in the first case
// (TestSinkGuardLeaseRealRedis).
func TestPgEffectInboxHoldsKey(t *testing.T) {
	t.Parallel()
	f := newPgFixture(t)
	rdb := integration.NewRedisClient(t, integration.Redis(t))
	prefix := integration.RedisPrefix(t, rdb)
	ctx := context.Background()
	const lease = 300 * time.Millisecond
	crash := errors.New("injected crash after COMMIT, before the done mark")
	for _, tt := range []struct {
		name   string
		points faults.Guard
		after  func(t *testing.T, lk string) // between the two attempts
	}{
		{"crash after commit", faults.Guard{AfterEffect: func(context.Context, string) error { return crash }}, func(*testing.T, string) {}},
		{"redis claim lost", faults.Guard{}, func(t *testing.T, lk string) {
			if err := rdb.Del(ctx, lk).Err(); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := prefix + tt.name + ":"
			g, err := sink.NewGuard(rdb, sink.WithPrefix(p), sink.WithLease(lease))
			if err != nil {
				t.Fatal(err)
			}
			id := "o-" + tt.name
			r := sinkOrder(0, 1, 1, id, "c", 5)
			start := f.works.Load()
			_, err = g.Do(faults.WithGuard(ctx, tt.points), &r, func(ctx context.Context, k string) error { return f.eff.Do(ctx, k, &r) })
			if tt.points.AfterEffect != nil && !errors.Is(err, crash) || tt.points.AfterEffect == nil && err != nil {
				t.Fatalf("first Do: %v", err)
			}
			tt.after(t, p+id)
			r.Epoch = 2 // the next owner, once the crashed claim's lease lapsed
			out, err := g.Do(ctx, &r, func(ctx context.Context, k string) error { return f.eff.Do(ctx, k, &r) })
			if err != nil || out != sink.Applied {
				t.Fatalf("second Do = %v, %v; want applied", out, err)
			}
			if works, rows := f.works.Load()-start, f.rows(t, id); works != 1 || rows != 1 {
				t.Fatalf("the Work ran %d times and left %d rows; want 1 and 1", works, rows)
			}
		})
	}
}

// TestPgEffectCheckViolationIsRecordsOwn: one order failing the table's
// CHECK is that record's own failure (sink.ErrRejected, so the pipeline
// dead-letters it), rolled back with its inbox row; the others land.
func TestPgEffectCheckViolationIsRecordsOwn(t *testing.T) {
	t.Parallel()
	f := newPgFixture(t)
	rdb := integration.NewRedisClient(t, integration.Redis(t))
	g, err := sink.NewGuard(rdb, sink.WithPrefix(integration.RedisPrefix(t, rdb)))
	if err != nil {
		t.Fatal(err)
	}
	const bad = 2
	var batch []sink.Record
	for i := range 5 {
		cents := int64(10)
		if i == bad {
			cents = -1
		}
		batch = append(batch, sinkOrder(0, int64(i), 1, fmt.Sprintf("o%d", i), "c", cents))
	}
	rs, err := pipeline.Guarded(g, f.eff.Do).Apply(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rs {
		switch {
		case i == bad && !(errors.Is(r.Err, sink.ErrRejected) && errors.Is(r.Err, pipeline.ErrEffectFailed)):
			t.Errorf("record %d (CHECK fails): err %v, want one wrapping sink.ErrRejected and pipeline.ErrEffectFailed", i, r.Err)
		case i != bad && (r.Err != nil || r.Outcome != sink.Applied):
			t.Errorf("record %d: %v, %v; want applied", i, r.Outcome, r.Err)
		}
	}
	if n := f.rows(t, ""); n != 4 {
		t.Errorf("orders table holds %d rows, want 4", n)
	}
	if f.inInbox(t, fmt.Sprintf("o%d", bad)) {
		t.Error("the rejected record's key is in the inbox: its transaction did not roll back whole")
	}
}

// lostCommitDB is a pool whose transactions' COMMIT lands but answers an
// error while lose is set: a connection lost after the server committed.
type lostCommitDB struct {
	*pgxpool.Pool
	lose *atomic.Bool
}

func (d lostCommitDB) Begin(ctx context.Context) (pgx.Tx, error) {
	tx, err := d.Pool.Begin(ctx)
	return lostCommitTx{Tx: tx, lose: d.lose}, err
}

type lostCommitTx struct {
	pgx.Tx
	lose *atomic.Bool
}

func (tx lostCommitTx) Commit(ctx context.Context) error {
	if err := tx.Tx.Commit(ctx); err != nil {
		return err
	}
	if tx.lose.CompareAndSwap(true, false) {
		return errors.New("injected: the connection broke before COMMIT's answer arrived")
	}
	return nil
}

// TestPgEffectCommitOutcomeLost: a COMMIT that landed but whose answer was
// lost is an error, so the pipeline applies the record again; the retry
// finds the key in the inbox and does not run the Work again.
func TestPgEffectCommitOutcomeLost(t *testing.T) {
	t.Parallel()
	var lose atomic.Bool
	f := newPgFixtureOn(t, func(p *pgxpool.Pool) pgeffect.DB { return lostCommitDB{Pool: p, lose: &lose} })
	lose.Store(true) // the next COMMIT, the record's (EnsureInbox committed its own)
	rdb := integration.NewRedisClient(t, integration.Redis(t))
	g, err := sink.NewGuard(rdb, sink.WithPrefix(integration.RedisPrefix(t, rdb)))
	if err != nil {
		t.Fatal(err)
	}
	ap := pipeline.Guarded(g, f.eff.Do)
	batch := []sink.Record{sinkOrder(0, 0, 1, "o-lost", "c", 5)}
	rs, err := ap.Apply(context.Background(), batch)
	if err != nil || rs[0].Err == nil {
		t.Fatalf("first Apply = %v, %v; want the record's commit error", rs, err)
	}
	rs, err = ap.Apply(context.Background(), batch) // the pipeline's retry
	if err != nil || rs[0].Err != nil || rs[0].Outcome != sink.Applied {
		t.Fatalf("retry = %+v, %v; want applied", rs, err)
	}
	if works, rows := f.works.Load(), f.rows(t, "o-lost"); works != 1 || rows != 1 {
		t.Fatalf("the Work ran %d times and left %d rows; want 1 and 1", works, rows)
	}
}

// TestPgEffectPerTopicInbox: with pgeffect.PerTopic one key from two
// topics applies once per topic (inbox key topic:key); without it, once.
func TestPgEffectPerTopicInbox(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		opts []pgeffect.Opt
		rows int
	}{{"shared", nil, 1}, {"per-topic", []pgeffect.Opt{pgeffect.PerTopic()}, 2}} {
		t.Run(tt.name, func(t *testing.T) {
			f := newPgFixture(t, tt.opts...)
			ctx := context.Background()
			for _, topic := range []string{"a", "b"} {
				r := sinkOrder(0, 0, 1, "k", "c", 5)
				r.Topic = topic
				if err := f.eff.Do(ctx, "k", &r); err != nil {
					t.Fatal(err)
				}
			}
			if n := f.rows(t, "k"); n != tt.rows {
				t.Fatalf("%d rows for key k from two topics, want %d", n, tt.rows)
			}
		})
	}
}
