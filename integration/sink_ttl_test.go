package integration_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/faults"
	"github.com/shardpipe/shardpipe/sink"
)

// meetKey applies one record to a fresh sink of the given mode and returns
// its outcome: record mode (SET NX GET), totals (the claim script) or guard
// (claim, effect, done).
type meetKey func(ctx context.Context, r sink.Record) (sink.Outcome, error)

func ttlModes(t *testing.T, rdb redis.UniversalClient, ttl time.Duration) map[string]struct {
	prefix string
	meet   meetKey
} {
	t.Helper()
	out := map[string]struct {
		prefix string
		meet   meetKey
	}{}
	for _, mode := range []string{"record", "totals", "guard"} {
		prefix := integration.RedisPrefix(t, rdb) + mode + ":"
		var meet meetKey
		switch mode {
		case "guard":
			g, err := sink.NewGuard(rdb, sink.WithPrefix(prefix), sink.WithTTL(ttl))
			if err != nil {
				t.Fatal(err)
			}
			meet = func(ctx context.Context, r sink.Record) (sink.Outcome, error) {
				return g.Do(ctx, &r, func(context.Context, string) error { return nil })
			}
		default:
			opts := []sink.LedgerOpt{sink.WithPrefix(prefix), sink.WithTTL(ttl)}
			if mode == "totals" {
				opts = append(opts, sink.WithEffect(sink.Totals{Hash: prefix + "totals", GroupField: "customer", AmountField: "amount_cents"}))
			}
			l, err := sink.NewLedger(rdb, opts...)
			if err != nil {
				t.Fatal(err)
			}
			meet = func(ctx context.Context, r sink.Record) (sink.Outcome, error) {
				rs, err := l.Apply(ctx, []sink.Record{r})
				if err != nil {
					return 0, err
				}
				return rs[0].Outcome, rs[0].Err
			}
		}
		out[mode] = struct {
			prefix string
			meet   meetKey
		}{prefix, meet}
	}
	return out
}

// TestSinkDuplicateRenewsTTLRealRedis: every record that meets a ledger key,
// applied or suppressed, leaves the key alive for at least the TTL from then
// (a re-send days after the first record keeps the entry as long as the
// re-send stays readable), in record, totals and guard mode; a key that
// already lives longer (or has no expiry) is never shortened.
func TestSinkDuplicateRenewsTTLRealRedis(t *testing.T) {
	t.Parallel()
	rdb := integration.NewRedisClient(t, integration.Redis(t))
	ctx := context.Background()
	const ttl = time.Hour
	for mode, m := range ttlModes(t, rdb, ttl) {
		t.Run(mode, func(t *testing.T) {
			key := m.prefix + "o1"
			first := sinkOrder(0, 1, 1, "o1", "a", 5)
			if out, err := m.meet(ctx, first); err != nil || out != sink.Applied {
				t.Fatalf("first record: %v, %v", out, err)
			}
			// The entry has aged: 5s left of its TTL.
			if err := rdb.PExpire(ctx, key, 5*time.Second).Err(); err != nil {
				t.Fatal(err)
			}
			resend := sinkOrder(0, 7, 1, "o1", "a", 5) // a re-send: another offset, same key
			if out, err := m.meet(ctx, resend); err != nil || out != sink.Suppressed {
				t.Fatalf("re-send: %v, %v; want suppressed", out, err)
			}
			if pttl := rdb.PTTL(ctx, key).Val(); pttl < ttl-time.Minute {
				t.Errorf("after a suppressed re-send the key expires in %v, want the TTL %v from the re-send", pttl, ttl)
			}
			// Never shortened: a longer expiry, and none at all, stay.
			if err := rdb.PExpire(ctx, key, 3*ttl).Err(); err != nil {
				t.Fatal(err)
			}
			if _, err := m.meet(ctx, resend); err != nil {
				t.Fatal(err)
			}
			if pttl := rdb.PTTL(ctx, key).Val(); pttl < 3*ttl-time.Minute {
				t.Errorf("a key with %v left was cut to %v", 3*ttl, pttl)
			}
			if err := rdb.Persist(ctx, key).Err(); err != nil {
				t.Fatal(err)
			}
			if _, err := m.meet(ctx, resend); err != nil {
				t.Fatal(err)
			}
			if pttl := rdb.PTTL(ctx, key).Val(); pttl != -1 {
				t.Errorf("a key without expiry got one: PTTL %v", pttl)
			}
		})
	}
}

// TestSinkGuardPendingNotRenewedRealRedis: a record that finds another
// owner's pending claim does not stretch it to the TTL: a pending claim
// lives for its lease, so a crashed owner's claim still lapses.
func TestSinkGuardPendingNotRenewedRealRedis(t *testing.T) {
	t.Parallel()
	rdb := integration.NewRedisClient(t, integration.Redis(t))
	prefix := integration.RedisPrefix(t, rdb)
	ctx := context.Background()
	const lease = 2 * time.Second
	crash := errors.New("crash after claim")
	crashing, err := sink.NewGuard(rdb, sink.WithPrefix(prefix), sink.WithLease(lease), sink.WithTTL(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	r := sinkOrder(0, 1, 1, "o1", "a", 5)
	crashCtx := faults.WithGuard(ctx, faults.Guard{AfterClaim: func(context.Context, string) error { return crash }})
	if _, err := crashing.Do(crashCtx, &r, func(context.Context, string) error { return nil }); !errors.Is(err, crash) {
		t.Fatal(err)
	}
	g, err := sink.NewGuard(rdb, sink.WithPrefix(prefix), sink.WithLease(lease), sink.WithTTL(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond) // one look, then give up waiting
	defer cancel()
	other := sinkOrder(0, 9, 1, "o1", "a", 5)
	if _, err := g.Do(wctx, &other, func(context.Context, string) error { return nil }); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Do under a live foreign claim = %v, want it to wait until its context ends", err)
	}
	if pttl := rdb.PTTL(ctx, prefix+"o1").Val(); pttl <= 0 || pttl > lease {
		t.Errorf("the foreign pending claim expires in %v, want within its lease %v", pttl, lease)
	}
}

// TestSinkForeignValueRealRedis: on the real server too, a ledger or guard
// key holding a value that is not a claim of its key space refuses the record
// with ErrMisconfigured and ErrBadClaim, naming the key, and writes nothing.
func TestSinkForeignValueRealRedis(t *testing.T) {
	t.Parallel()
	rdb := integration.NewRedisClient(t, integration.Redis(t))
	ctx := context.Background()
	for mode, m := range ttlModes(t, rdb, time.Hour) {
		t.Run(mode, func(t *testing.T) {
			key := m.prefix + "o1"
			if err := rdb.Set(ctx, key, "session:42", time.Hour).Err(); err != nil {
				t.Fatal(err)
			}
			_, err := m.meet(ctx, sinkOrder(0, 1, 1, "o1", "a", 5))
			if !errors.Is(err, sink.ErrMisconfigured) || !errors.Is(err, sink.ErrBadClaim) || !strings.Contains(err.Error(), key) {
				t.Fatalf("err = %v, want ErrMisconfigured and ErrBadClaim naming %s", err, key)
			}
			if v := rdb.Get(ctx, key).Val(); v != "session:42" {
				t.Errorf("the foreign value became %q", v)
			}
		})
	}
}
