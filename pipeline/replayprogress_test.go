package pipeline_test

import (
	"context"
	"testing"

	"github.com/shardpipe/shardpipe/pipeline"
)

// TestReplayProgressAccountsEveryRecord: a replay's progress accounts for
// every record it read, Read = Applied + Suppressed + Poison, in a dry run
// and in runs: a poison record found already dead-lettered by an earlier
// replay (its marker done, not written again) is still Poison, counted in
// DeadLetterReplays; a record suppressed as this id's own earlier claim
// (Redelivered) is Applied, not also Suppressed.
func TestReplayProgressAccountsEveryRecord(t *testing.T) {
	env := dlqEnv(t)
	produce(t, env.brokers, orderRecords()...) // 10 records, 2 poison
	for _, tc := range []struct {
		id                                  string
		dry                                 bool
		applied, suppressed, poison, replay int64
	}{
		{"dry", true, 8, 0, 2, 0},
		{"first", false, 8, 0, 2, 0},
		{"second", false, 0, 8, 2, 2}, // keys claimed by "first", dead letters written by it
	} {
		r := fakeReplay(t, env, tc.id, pipeline.DeadLetters(env.rc, "dl:"), pipeline.Logger(quiet()))
		var err error
		if tc.dry {
			err = r.DryRun(context.Background(), totalsLedger(t, env.rc))
		} else {
			err = r.Run(context.Background())
		}
		if err != nil {
			t.Fatalf("replay %s: %v", tc.id, err)
		}
		p := r.Progress()[0]
		if !p.Done || p.Read != 10 || p.Applied != tc.applied || p.Suppressed != tc.suppressed || p.Poison != tc.poison ||
			p.DeadLetterReplays != tc.replay || p.Applied+p.Suppressed+p.Poison != p.Read {
			t.Fatalf("replay %s: progress %+v, want done, read 10 = %d applied + %d suppressed + %d poison (%d found written)",
				tc.id, p, tc.applied, tc.suppressed, tc.poison, tc.replay)
		}
	}
}
