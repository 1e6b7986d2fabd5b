package pgeffect

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/shardpipe/shardpipe/sink"
)

// DoBatch is the effect of recs, whose business keys are keys (same
// length), in one transaction (a pipeline.BatchEffect): one INSERT puts
// every key into the inbox and returns those that were new, the Work runs
// for each new key in order, and one COMMIT lands them all. It returns one
// error per record, nil for a record whose Work committed now or before (its
// key was in the inbox already). It costs three round trips plus the
// Works', and one durable commit for the whole batch instead of one per
// record. A key given twice is inserted once, for its first record.
//
// A record whose Work fails for its own reason (sink.ErrRejected: SQLSTATE
// class 22 or 23, or a Work error wrapping sink.ErrRejected or
// sink.ErrBadValue) is left out: the transaction rolls back, its inbox row
// with it, the records before it run again in a transaction of their own
// and the records after it in another, so each Work runs at most twice. A
// batch whose inbox INSERT or COMMIT PostgreSQL refuses for its data (a key
// it cannot store, a deferred constraint) runs again one record at a time,
// so the refusal falls on its record alone. Any other failure of record i's
// Work ends the batch at i: the records before it run again and commit, i
// gets its error and the records after i an error wrapping
// sink.ErrNotApplied (not attempted). Any other failure of BEGIN, the inbox
// INSERT or COMMIT is the error of every record not landed yet, classified
// as Do's are (a failed COMMIT's outcome is unknown; a retry finds the keys
// that landed in the inbox).
func (e *Effect) DoBatch(ctx context.Context, keys []string, recs []*sink.Record) []error {
	if len(keys) != len(recs) {
		panic(fmt.Sprintf("pgeffect: DoBatch: %d keys for %d records", len(keys), len(recs)))
	}
	errs := make([]error, len(recs))
	all := make([]int, len(recs))
	for i := range all {
		all[i] = i
	}
	// todo holds the runs of records still to land, in offset order, each
	// to be one transaction.
	todo := [][]int{all}
	for len(todo) > 0 {
		run := todo[0]
		todo = todo[1:]
		if len(run) == 0 {
			continue
		}
		failed, err := e.runBatch(ctx, keys, recs, run)
		switch {
		case failed < 0 && err == nil:
			continue
		case failed < 0 && rejected(err) && len(run) > 1:
			split := make([][]int, len(run)) // one transaction a record: the refusal falls on its own
			for k, i := range run {
				split[k] = []int{i}
			}
			todo = append(split, todo...)
			continue
		case failed < 0 && rejected(err): // a run of one: its own refusal
			errs[run[0]] = err
			continue
		case failed < 0:
			for _, i := range run {
				errs[i] = err
			}
			notAttempted(errs, keys, recs, run[0], todo)
			return errs
		}
		bad := run[failed]
		errs[bad] = err
		if rejected(err) {
			todo = append([][]int{run[:failed], run[failed+1:]}, todo...)
			continue
		}
		notAttempted(errs, keys, recs, bad, append([][]int{run[failed+1:]}, todo...))
		todo = [][]int{run[:failed]}
	}
	return errs
}

// rejected reports whether err says the record, not the database, is at
// fault (see classify).
func rejected(err error) bool {
	return errors.Is(err, sink.ErrRejected) || errors.Is(err, sink.ErrBadValue)
}

// notAttempted sets the error of every record of runs: not attempted, the
// batch having ended at record bad.
func notAttempted(errs []error, keys []string, recs []*sink.Record, bad int, runs [][]int) {
	for _, run := range runs {
		for _, i := range run {
			errs[i] = fmt.Errorf("pgeffect: %s key %s: %w: the batch's transaction ends at %s, which failed",
				at(recs[i]), sink.QuoteKey(keys[i]), sink.ErrNotApplied, at(recs[bad]))
		}
	}
}

// runBatch runs one transaction over the records live (indexes into keys
// and recs, in order). It returns failed < 0 with the transaction's error
// (nil: committed), or the position in live of the record whose Work failed
// (the transaction rolled back) with that Work's error.
func (e *Effect) runBatch(ctx context.Context, keys []string, recs []*sink.Record, live []int) (failed int, err error) {
	tx, err := e.db.Begin(ctx)
	if err != nil {
		return -1, fmt.Errorf("pgeffect: %s: begin: %w", span(keys, recs, live), notApplied(err))
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after Commit a no-op; else the rollback itself
	fresh, err := e.insertKeys(ctx, tx, keys, recs, live)
	if err != nil {
		return -1, fmt.Errorf("pgeffect: %s: inbox insert into %s: %w", span(keys, recs, live), e.table, classify(err))
	}
	for p, i := range live {
		ik := e.inboxKey(keys[i], recs[i])
		if _, ok := fresh[ik]; !ok {
			continue // in the inbox: its Work committed before (or runs for an earlier record of this batch)
		}
		delete(fresh, ik)
		if err := e.work(ctx, tx, keys[i], recs[i]); err != nil {
			return p, fmt.Errorf("pgeffect: %s key %s: work (rolled back): %w", at(recs[i]), sink.QuoteKey(keys[i]), classify(err))
		}
	}
	if err := tx.Commit(ctx); err != nil {
		if refused := classify(err); rejected(refused) {
			// Refused at COMMIT (a deferred constraint): rolled back.
			return -1, fmt.Errorf("pgeffect: %s: commit refused, rolled back: %w", span(keys, recs, live), refused)
		}
		if unavailable(err) {
			err = fmt.Errorf("%w: %w", sink.ErrUnavailable, err)
		}
		return -1, fmt.Errorf("pgeffect: %s: commit failed, so it may or may not have landed (a retry finds the keys in the inbox if it did): %w",
			span(keys, recs, live), err)
	}
	return -1, nil
}

// insertKeys inserts the inbox keys of the records live in one statement
// and returns the set of those that were new.
func (e *Effect) insertKeys(ctx context.Context, tx pgx.Tx, keys []string, recs []*sink.Record, live []int) (map[string]struct{}, error) {
	iks, topics := make([]string, len(live)), make([]string, len(live))
	parts, offsets := make([]int32, len(live)), make([]int64, len(live))
	for p, i := range live {
		r := recs[i]
		iks[p], topics[p], parts[p], offsets[p] = e.inboxKey(keys[i], r), r.Topic, r.Partition, r.Offset
	}
	rows, err := tx.Query(ctx, e.insert, iks, topics, parts, offsets)
	if err != nil {
		return nil, err
	}
	fresh := make(map[string]struct{}, len(live))
	var k string
	_, err = pgx.ForEachRow(rows, []any{&k}, func() error { fresh[k] = struct{}{}; return nil })
	return fresh, err
}

// inboxKey is r's key in the inbox: key, or topic:key with PerTopic.
func (e *Effect) inboxKey(key string, r *sink.Record) string {
	if e.perTopic {
		return r.Topic + ":" + key
	}
	return key
}

// span names the records live: one by its place and key, more by topic,
// partition and offset range.
func span(keys []string, recs []*sink.Record, live []int) string {
	a, b := recs[live[0]], recs[live[len(live)-1]]
	if len(live) == 1 {
		return at(a) + " key " + sink.QuoteKey(keys[live[0]])
	}
	return fmt.Sprintf("%s/%d@%d-%d (%d records)", a.Topic, a.Partition, a.Offset, b.Offset, len(live))
}
