package sink_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/sink"
)

// TestOptionScopes lists which constructor accepts which option. The
// scoping is by type (LedgerOpt, GuardOpt, and Opt for both), so passing a
// Guard-only option to NewLedger, or the reverse, does not compile; this
// table keeps the scopes from changing by accident. Before the options were
// typed, NewLedger refused WithLease and NewGuard refused WithEffect at run
// time (TestNewLedgerOptions and TestGuardNoKey checked it); now neither
// call compiles.
func TestOptionScopes(t *testing.T) {
	totals := sink.Totals{Hash: "h", GroupField: "g", AmountField: "a"}
	for _, tt := range []struct {
		name          string
		opt           any
		ledger, guard bool
	}{
		{"WithPrefix", sink.WithPrefix("p:"), true, true},
		{"WithTTL", sink.WithTTL(time.Hour), true, true},
		{"WithKeySource", sink.WithKeySource(sink.KeySource{}), true, true},
		{"WithRetry", sink.WithRetry(sink.Backoff{Initial: time.Millisecond, Max: time.Second, Attempts: 1}), true, true},
		{"WithLogger", sink.WithLogger(slog.Default()), true, true},
		{"WithEffect", sink.WithEffect(totals), true, false},
		{"WithLease", sink.WithLease(time.Second), false, true},
	} {
		_, ledger := tt.opt.(sink.LedgerOpt)
		_, guard := tt.opt.(sink.GuardOpt)
		_, both := tt.opt.(sink.Opt)
		if ledger != tt.ledger || guard != tt.guard || both != (tt.ledger && tt.guard) {
			t.Errorf("%s: NewLedger takes it %v, NewGuard %v, Opt %v; want %v, %v, %v",
				tt.name, ledger, guard, both, tt.ledger, tt.guard, tt.ledger && tt.guard)
		}
	}
}
