package termui

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/shardpipe/shardpipe/admin"
	"github.com/shardpipe/shardpipe/pipeline"
)

// TestTables: each table says what it is (a dry run says so), shows "-"
// for nothing committed, totals a replay, and returns the first write error.
func TestTables(t *testing.T) {
	moves := []admin.Move{{Partition: 0, Before: -1, After: 5}, {Partition: 1, Before: 7, After: 3}}
	ps := []pipeline.ReplayProgress{{Partition: 0, From: 0, To: 10, Read: 10, Applied: 6, Suppressed: 3, Poison: 1, Done: true},
		{Partition: 1, From: 2, To: 9, Read: 4, Applied: 4}}
	st := admin.GroupStatus{Group: "g", Partitions: []admin.PartitionLag{{Topic: "t", Committed: -1, LastStable: 4, LogEnd: 4, Lag: 4}}}
	tests := []struct {
		name  string
		write func(*bytes.Buffer) error
		want  []string
	}{
		{"moves", func(b *bytes.Buffer) error { return MovesTable(b, "g", "t", moves, false) },
			[]string{"group g topic t: offsets moved", "0       -      5", "1       7      3"}},
		{"moves dry", func(b *bytes.Buffer) error { return MovesTable(b, "g", "t", moves, true) },
			[]string{"dry run: group g topic t (nothing committed)"}},
		{"replay", func(b *bytes.Buffer) error { return ReplaySummary(b, "r1", "t", false, ps) },
			[]string{"replay r1 of t", "APPLIED", "done", "stopped", "total"}},
		{"replay dry", func(b *bytes.Buffer) error { return ReplaySummary(b, "r1", "t", true, ps) },
			[]string{"dry run (nothing written) r1 of t", "WOULD-APPLY", "WOULD-SUPPRESS"}},
		{"status", func(b *bytes.Buffer) error { return StatusTable(b, st) },
			[]string{"group g", "epoch n/a", "t      0          -"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.write(&b); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("missing %q in\n%s", w, b.String())
				}
			}
		})
	}
	if err := MovesTable(failWriter{}, "g", "t", moves, false); !errors.Is(err, errWrite) {
		t.Errorf("MovesTable on a failing writer: %v, want %v", err, errWrite)
	}
}

var errWrite = errors.New("write failed")

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errWrite }
