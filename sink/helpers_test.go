package sink

import (
	"fmt"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// newRedis starts a miniredis and a client for it, both closed by t.Cleanup.
func newRedis(t testing.TB) (*miniredis.Miniredis, redis.UniversalClient) {
	t.Helper()
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1, DialerRetries: 1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { c.Close() })
	return m, c
}

// fastRetry keeps retry tests quick.
func fastRetry() Backoff {
	return Backoff{Initial: time.Millisecond, Max: 5 * time.Millisecond, Attempts: 4}
}

// order makes a record keyed by id with a JSON value.
func order(p int32, off int64, id, customer string, cents int64) Record {
	return Record{
		Topic: "orders", Partition: p, Offset: off, Epoch: 1,
		Key:   []byte(id),
		Value: fmt.Appendf(nil, `{"order_id":%q,"customer":%q,"amount_cents":%d}`, id, customer, cents),
	}
}

func outcomes(rs []Result) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		if r.Err != nil {
			out[i] = "err"
		} else {
			out[i] = r.Outcome.String()
		}
	}
	return out
}
