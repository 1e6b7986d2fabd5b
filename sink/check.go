package sink

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// Check says what Apply would do with batch, without writing anything: one
// pipelined round trip of EXISTS on the batch's distinct ledger keys (read
// only; never SET, never a script). It returns one Result per record at the
// same index: Applied when the key is not in the ledger (Apply would claim
// it), Suppressed when it is (Apply would report Suppressed or Redelivered;
// Check does not read whose claim it is, nor renew it), or when an earlier
// record of the batch has the same key; Err for a record Apply would refuse
// (no usable key, a value the effect cannot read, keys in different cluster
// slots).
//
// Check sees the ledger as it is now: a key another writer claims between
// Check and a later Apply makes that Apply suppress what Check counted as
// applied. It does not retry; an error from Redis wraps ErrUnknown and means
// no answer for the batch.
func (l *Ledger) Check(ctx context.Context, batch []Record) ([]Result, error) {
	results := make([]Result, len(batch))
	first := make(map[string]int, len(batch)) // ledger key -> index of its EXISTS
	var keys []string
	owner := make([]int, len(batch)) // record -> index in keys, -1 when none
	for i := range batch {
		owner[i] = -1
		var w write
		key, err := l.prepare(&batch[i], i, &w)
		results[i].Key, results[i].Err = key, err
		if err != nil {
			continue
		}
		if _, dup := first[w.key]; dup {
			results[i].Outcome = Suppressed
			continue
		}
		first[w.key] = len(keys)
		owner[i] = len(keys)
		keys = append(keys, w.key)
	}
	if len(keys) == 0 {
		return results, nil
	}
	p := l.c.Pipeline()
	for _, k := range keys {
		p.Exists(ctx, k)
	}
	cmds, err := p.Exec(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: check %d keys from %s: %w", ErrUnknown, len(keys), batch[0].at(), err)
	}
	for i, j := range owner {
		if j < 0 {
			continue
		}
		ic, ok := cmds[j].(*redis.IntCmd)
		if !ok {
			return nil, fmt.Errorf("%w: check %s: EXISTS answered with %T", ErrUnknown, batch[i].at(), cmds[j])
		}
		n, err := ic.Result()
		if err != nil {
			return nil, fmt.Errorf("%w: check %s key %s: %w", ErrUnknown, batch[i].at(), QuoteKey(results[i].Key), err)
		}
		if n > 0 {
			results[i].Outcome = Suppressed
		} else {
			results[i].Outcome = Applied
		}
	}
	return results, nil
}
