package sink

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestLedgerRetry(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name    string
		fault   func(m miniRedis)
		heal    func(m miniRedis)
		wantErr bool
	}{
		{"LOADING then healthy", func(m miniRedis) { m.SetError("LOADING Redis is loading the dataset in memory") }, func(m miniRedis) { m.SetError("") }, false},
		{"READONLY then healthy", func(m miniRedis) { m.SetError("READONLY You can't write against a read only replica.") }, func(m miniRedis) { m.SetError("") }, false},
		{"server down then back", func(m miniRedis) { m.Close() }, func(m miniRedis) { _ = m.Restart() }, false},
		{"LOADING forever", func(m miniRedis) { m.SetError("LOADING Redis is loading the dataset in memory") }, nil, true},
		{"server gone", func(m miniRedis) { m.Close() }, nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, c := newRedis(t)
			l, err := NewLedger(c, WithRetry(Backoff{Initial: 5 * time.Millisecond, Max: 20 * time.Millisecond, Attempts: 20}))
			if err != nil {
				t.Fatal(err)
			}
			if tt.heal == nil {
				l, _ = NewLedger(c, WithRetry(fastRetry()))
			}
			h := watchCalls(c)
			tt.fault(m)
			type reply struct {
				rs  []Result
				err error
			}
			done := make(chan reply, 1)
			go func() {
				rs, err := l.Apply(ctx, []Record{order(0, 0, "o1", "c", 1), order(0, 1, "o2", "c", 1)})
				done <- reply{rs, err}
			}()
			if tt.heal != nil {
				// Heal only once the sink has failed three round trips.
				h.await(t, "three failed round trips", func() bool { return h.failed.Load() >= 3 })
				tt.heal(m)
			}
			got := <-done
			rs, err := got.rs, got.err
			if tt.wantErr {
				if !errors.Is(err, ErrUnknown) || rs != nil {
					t.Fatalf("got %v, %v; want nil, ErrUnknown", rs, err)
				}
				if n := h.failed.Load(); n != int32(fastRetry().Attempts) {
					t.Errorf("%d failed round trips, want the %d attempts of the backoff", n, fastRetry().Attempts)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n := h.failed.Load(); n < 3 {
				t.Errorf("%d failed round trips before success, want at least 3", n)
			}
			if got := outcomes(rs); got[0] != "applied" || got[1] != "applied" {
				t.Errorf("got %v", got)
			}
		})
	}
}

// miniRedis is the part of *miniredis.Miniredis the fault table uses.
type miniRedis interface {
	SetError(string)
	Close()
	Restart() error
}

// TestLedgerRetryAfterLostReply covers a claim that landed in a round trip
// whose reply was lost: the retry finds the record's own claim and reports
// Applied, while a different record with that key is Suppressed.
func TestLedgerRetryAfterLostReply(t *testing.T) {
	ctx := context.Background()
	_, c := newRedis(t)
	l, err := NewLedger(c)
	if err != nil {
		t.Fatal(err)
	}
	r := order(1, 10, "o1", "c", 1)
	// The first attempt "landed" but the caller saw an error.
	if err := c.Set(ctx, "shardpipe:ledger:o1", claimFor(&r, ClaimApplied, time.Now()).Encode(), 0).Err(); err != nil {
		t.Fatal(err)
	}
	rs, err := l.Apply(ctx, []Record{r, order(1, 11, "o1", "c", 1)})
	if err != nil {
		t.Fatal(err)
	}
	if got := outcomes(rs); got[0] != "applied" || got[1] != "suppressed" {
		t.Errorf("got %v, want [applied suppressed]", got)
	}
}

func TestLedgerContextEnds(t *testing.T) {
	m, c := newRedis(t)
	l, _ := NewLedger(c, WithRetry(Backoff{Initial: time.Second, Max: time.Second, Attempts: 100}))
	m.SetError("LOADING Redis is loading the dataset in memory")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := l.Apply(ctx, []Record{order(0, 0, "o1", "c", 1)})
	if !errors.Is(err, ErrUnknown) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want ErrUnknown and DeadlineExceeded", err)
	}
	if time.Since(start) > 500*time.Millisecond {
		t.Error("Apply outlived its context")
	}
}
