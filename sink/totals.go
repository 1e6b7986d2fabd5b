package sink

import (
	"errors"
	"fmt"
	"strconv"
)

// Totals is a ready Effect: HINCRBY Hash <GroupField> <AmountField>, where
// both fields are top-level fields of the record's JSON value; the group
// is a string or number, the amount an integer (e.g. amount_cents) that
// fits int64. Sums per group are then exactly-once aggregates that a test
// can check by arithmetic. A value without these fields gets ErrBadValue.
//
// On Redis Cluster the hash and the ledger keys must share a slot: give the
// ledger prefix and Hash the same hash tag, e.g. WithPrefix("{orders}:")
// and Hash "{orders}:totals". NewLedger refuses a cluster client with an
// untagged prefix. The cost: the whole ledger then lives in one slot, on
// one primary; to spread load, run several ledgers with their own tags and
// hashes (for example one per partition) and add the hashes up when reading.
type Totals struct {
	Hash        string // the Redis hash the amounts are added to. Required
	GroupField  string // the JSON field whose value names the hash field (the group). Required
	AmountField string // the JSON field holding the integer amount added. Required
}

func (t Totals) validate() error {
	if t.Hash == "" || t.GroupField == "" || t.AmountField == "" {
		return fmt.Errorf("totals %+v: Hash, GroupField and AmountField must all be set", t)
	}
	return nil
}

// Lua implements Effect.
func (t Totals) Lua() string {
	return "redis.call('HINCRBY', KEYS[1], ARGV[1], ARGV[2])"
}

// Args implements Effect: it reads the two fields in one pass over the
// value. A plain value (plain keys, the group a number or a string without
// escapes, the amount an integer literal) costs the group string, the
// boxed amount and one allocation for the returned slices; anything else is
// decided by encoding/json, with the same results and errors.
func (t Totals) Args(r *Record, _ string) ([]string, []any, error) {
	g, a, ok := scanFields(r.Value, t.GroupField, t.AmountField)
	if ok && g.found() && a.found() {
		if amount, ok := plainInt64(r.Value[a.from:a.to]); ok {
			if group, ok := plainScalar(r.Value[g.from:g.to]); ok && group != "" {
				out := &totalsArgs{keys: [1]string{t.Hash}, args: [2]any{group, amount}}
				return out.keys[:], out.args[:], nil
			}
		}
	}
	return t.decodeArgs(r)
}

// totalsArgs holds what Args returns, in one allocation.
type totalsArgs struct {
	keys [1]string
	args [2]any
}

// decodeArgs is Args by encoding/json: for the values the scanner leaves to
// it, and the errors.
func (t Totals) decodeArgs(r *Record) ([]string, []any, error) {
	m, err := jsonFields(r.Value)
	if err != nil {
		return nil, nil, err
	}
	raw, ok := m[t.GroupField]
	if !ok {
		return nil, nil, fmt.Errorf("no field %q", t.GroupField)
	}
	group, err := scalar(t.GroupField, raw)
	if err != nil {
		return nil, nil, err
	}
	if group == "" {
		return nil, nil, fmt.Errorf("field %q is empty", t.GroupField)
	}
	raw, ok = m[t.AmountField]
	if !ok {
		return nil, nil, fmt.Errorf("no field %q", t.AmountField)
	}
	amount, err := strconv.ParseInt(string(trimmed(raw)), 10, 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) {
			err = ne.Err
		}
		return nil, nil, fmt.Errorf("field %q is %s, not an int64: %w", t.AmountField, trimmed(raw), err)
	}
	return []string{t.Hash}, []any{group, amount}, nil
}
