package termui

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/admin"
	"github.com/shardpipe/shardpipe/pipeline"
)

// TestTables: each table says what it is (a dry run says so), shows "-"
// for nothing committed, totals a replay, logs a resumed replay plan with
// its time in UTC, and returns the first write error.
func TestTables(t *testing.T) {
	moves := []admin.Move{{Partition: 0, Before: -1, After: 5}, {Partition: 1, Before: 7, After: 3}}
	ps := []pipeline.ReplayProgress{{Partition: 0, From: 0, To: 10, Read: 10, Applied: 6, Suppressed: 3, Poison: 1, Done: true},
		{Partition: 1, From: 2, To: 9, Read: 4, Applied: 4}}
	plan := pipeline.StoredPlan{Ranges: []pipeline.Range{{Partition: 0, From: 1, To: 5}, {Partition: 2, From: 0, To: 9}}, Given: "--from 1",
		At: time.Date(2026, 11, 30, 4, 0, 0, 0, time.FixedZone("CET", 3600))}
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
		{"status JSON", func(b *bytes.Buffer) error { return StatusJSON(b, st) },
			[]string{"{\n  \"group\": \"g\",", "\"last_stable\": 4", "\n}\n"}}, // one object, then a newline
		{"resumed plan", func(b *bytes.Buffer) error {
			LogResumedPlan(slog.New(slog.NewTextHandler(b, nil)), "r1", "t", plan)
			return nil
		}, []string{`msg="replay id used before: reusing the ranges its first run planned" id=r1 topic=t stored_at=2026-11-30T03:00:00Z given="--from 1" ranges=0:1-5,2:0-9`,
			"msg=\"stored replay range\" partition=0 from=1 to=5\n", "msg=\"stored replay range\" partition=2 from=0 to=9\n"}},
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
	if err := StatusJSON(failWriter{}, st); !errors.Is(err, errWrite) || !strings.HasPrefix(err.Error(), "write status: ") {
		t.Errorf("StatusJSON on a failing writer: %v, want write status: %v", err, errWrite)
	}
	if err := MovesTable(failWriter{}, "g", "t", moves, false); !errors.Is(err, errWrite) {
		t.Errorf("MovesTable on a failing writer: %v, want %v", err, errWrite)
	}
}

var errWrite = errors.New("write failed")

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errWrite }
