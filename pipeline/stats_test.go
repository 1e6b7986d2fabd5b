package pipeline_test

import (
	"testing"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/pipeline"
)

// TestTotals: Totals sums every counter of PartitionStats into the field
// of the same name (it returned five positional numbers before, and left
// Claimed, Redelivered and DeadLetterReplays out).
func TestTotals(t *testing.T) {
	ps := []pipeline.PartitionStats{
		{Partition: checkpoint.Partition{Topic: "a"}, Attempts: 1, Applied: 2, Claimed: 3, Suppressed: 4, Redelivered: 5,
			DeadLettered: 6, DeadLetterReplays: 7, Fenced: 8, Start: 9, Landed: 10, Committed: 11, Epoch: 12, Held: true},
		{Partition: checkpoint.Partition{Topic: "a", Partition: 1}, Attempts: 100, Applied: 200, Claimed: 300,
			Suppressed: 400, Redelivered: 500, DeadLettered: 600, DeadLetterReplays: 700, Fenced: 800},
	}
	want := pipeline.Summary{Attempts: 101, Applied: 202, Claimed: 303, Suppressed: 404, Redelivered: 505,
		DeadLettered: 606, DeadLetterReplays: 707, Fenced: 808}
	if got := pipeline.Totals(ps); got != want {
		t.Errorf("Totals = %+v, want %+v", got, want)
	}
	if got := pipeline.Totals(nil); got != (pipeline.Summary{}) {
		t.Errorf("Totals(nil) = %+v, want zeros", got)
	}
}
