package scenario

import (
	"context"
	"fmt"
)

// ledgerView is the ledger read back after a scenario and the topic it
// must match.
type ledgerView struct {
	claims map[string]Claim
	bad    map[string]string // business key -> value that is not a claim
	keys   map[Pos]string    // the topic's records' keys by position
}

// readLedgerView reads every ledger key of env's prefix and every record
// key of env's topic.
func readLedgerView(ctx context.Context, env runEnv) (ledgerView, error) {
	l, err := ReadLedger(ctx, env.Redis, env.Prefix, func(k string) bool { return !env.LedgerKey(k) })
	if err != nil {
		return ledgerView{}, fmt.Errorf("read the ledger: %w", err)
	}
	keys, _, err := TopicKeys(ctx, env.Brokers, env.Topic, env.kopts...)
	if err != nil {
		return ledgerView{}, fmt.Errorf("read the topic: %w", err)
	}
	return ledgerView{claims: l.Claims, bad: l.Bad, keys: keys}, nil
}

// ledgerFaults compares the ledger with the topic and the produced keys:
// one finished claim per produced key, naming a record of the topic that
// holds that key, and nothing else.
func (r *Report) ledgerFaults() []string {
	var bad []string
	produced := make(map[string]bool, len(r.Keys))
	for _, k := range r.Keys {
		produced[k] = true
		if _, ok := r.Ledger[k]; !ok {
			if v, garbage := r.ledgerBad[k]; garbage {
				bad = append(bad, fmt.Sprintf("ledger key %q holds %.60q, not a claim", k, v))
			} else {
				bad = append(bad, fmt.Sprintf("ledger has no key for %q", k))
			}
		}
	}
	for k, c := range r.Ledger {
		at := Pos{Partition: c.Partition, Offset: c.Offset}
		switch {
		case !produced[k]:
			bad = append(bad, fmt.Sprintf("ledger key %q: no such record was produced", k))
		case c.Topic != r.Topic || r.records[at] != k:
			bad = append(bad, fmt.Sprintf("ledger key %q names %s %s, which does not hold it", k, c.Topic, at))
		case c.State != "applied" && c.State != "done":
			bad = append(bad, fmt.Sprintf("ledger key %q is %s: its effect is not known to have landed", k, c.State))
		}
	}
	for k, v := range r.ledgerBad {
		if !produced[k] {
			bad = append(bad, fmt.Sprintf("ledger key %q holds %.60q, not a claim", k, v))
		}
	}
	return bad
}
