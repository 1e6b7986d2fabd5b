package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/flagcheck"
	"github.com/shardpipe/shardpipe/pipeline"
)

// TestStoredPlanNamesPartitionIDs: the range a replay's plan records and
// a refused rerun names use --partition-ids, the flag replay takes; a plan
// stored with the old word (--partitions) still matches its rerun.
func TestStoredPlanNamesPartitionIDs(t *testing.T) {
	tests := []struct {
		name, stored string // the plan's given
		from         string // this run's --from
		want         string // "" resumes; else a line of the refusal contains it
	}{
		{"same flags", "--from 0 --to (end) --partition-ids (all)", "0", ""},
		{"a plan stored before the rename", "--from 0 --to (end) --partitions (all)", "0", ""},
		{"other flags", "--from 0 --to (end) --partition-ids (all)", "5",
			"with --from 0 --to (end) --partition-ids (all), which planned the ranges (partition:from-to) 0:0-10; this run gives --from 5 --to (end) --partition-ids (all)"},
		{"other flags, old plan", "--from 0 --to (end) --partitions 1", "5",
			"with --from 0 --to (end) --partition-ids 1, which planned"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mr := miniredis.RunT(t)
			rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
			defer rdb.Close()
			mr.HSet(pipeline.DefaultReplayPrefix+"r1:orders:plan", "given", tt.stored, "at", time.Now().UTC().Format(time.RFC3339Nano), "p:0", "0-10")
			rc := &replayConfig{topic: "orders", id: "r1", checkpointPrefix: pipeline.DefaultReplayPrefix,
				given: flagcheck.GivenRange(tt.from, "", nil)}
			rc.connectTimeout = 5 * time.Second
			ranges, err := storedPlan(context.Background(), rc, rdb, slog.New(slog.NewTextHandler(io.Discard, nil)))
			if tt.want == "" {
				if err != nil || len(ranges) != 1 || ranges[0] != (pipeline.Range{Partition: 0, From: 0, To: 10}) {
					t.Fatalf("storedPlan = %v, %v; want the stored range 0:0-10", ranges, err)
				}
				return
			}
			var ee *exitError
			if !errors.As(err, &ee) || ee.code != exitUsage {
				t.Fatalf("storedPlan = %v, %v; want a usage error", ranges, err)
			}
			msg := strings.Join(ee.lines, "\n")
			if !strings.Contains(msg, tt.want) || strings.Contains(msg, "--partitions") {
				t.Fatalf("refusal %q: want it to contain %q and not name --partitions", msg, tt.want)
			}
		})
	}
}
