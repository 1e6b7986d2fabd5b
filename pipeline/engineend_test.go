package pipeline

import (
	"errors"
	"fmt"
	"testing"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/sink"
)

// TestEngineExit: how a term's loop ends (engine.exit), the same for both
// schedules: the loop's own error first, then the failure that stopped
// the partition (the first, a fence being none), then, unless fenced,
// errStopped naming the records left and why the first was; the records
// left come back by offset, for the worker to finish.
func TestEngineExit(t *testing.T) {
	part := checkpoint.Partition{Topic: "t", Partition: 2}
	boom, down := errors.New("boom"), errors.New("redis down")
	left := func(offs ...int64) []sink.Record {
		var rs []sink.Record
		for _, o := range offs {
			rs = append(rs, sink.Record{Topic: "t", Partition: 2, Offset: o})
		}
		return rs
	}
	for _, tc := range []struct {
		name     string
		build    func(e *engine)
		loopErr  error
		fenced   bool
		wantErr  string // "" for nil
		wantLeft string
	}{
		{"nothing", func(*engine) {}, nil, false, "", "[]"},
		{"left, by offset", func(e *engine) { e.leave(down, left(7)...); e.leave(boom, left(3, 5)...) }, nil, false,
			"t/2 epoch 4 offsets 3..7: pipeline: stopped with a batch whose effects are unknown: redis down", "[3 5 7]"},
		{"left, fenced", func(e *engine) { e.leave(down, left(3)...) }, nil, true, "", "[3]"},
		{"fatal before left", func(e *engine) { e.leave(down, left(3)...); e.stopOn(boom) }, nil, false, "boom", "[3]"},
		{"the first fatal", func(e *engine) { e.stopOn(errFenced); e.stopOn(boom); e.stopOn(down) }, nil, false, "boom", "[]"},
		{"the loop's own error", func(e *engine) { e.stopOn(boom) }, down, false, "redis down", "[]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &engine{}
			tc.build(e)
			rs, err := e.exit(part, 4, tc.loopErr, tc.fenced)
			if got := fmt.Sprint(err); (err == nil) != (tc.wantErr == "") || err != nil && got != tc.wantErr {
				t.Errorf("exit error %v, want %q", err, tc.wantErr)
			}
			if tc.wantErr != "" && tc.loopErr == nil && e.end.fatal == nil && !errors.Is(err, errStopped) {
				t.Errorf("exit error %v does not wrap errStopped", err)
			}
			var offs []int64
			for _, r := range rs {
				offs = append(offs, r.Offset)
			}
			if got := fmt.Sprint(offs); got != tc.wantLeft {
				t.Errorf("left %s, want %s", got, tc.wantLeft)
			}
			if len(rs) > 0 && !e.end.frozen {
				t.Errorf("records left but the partition is not frozen")
			}
		})
	}
}
