package termui

import (
	"testing"

	"github.com/shardpipe/shardpipe/pipeline"
)

func TestReplayBar(t *testing.T) {
	tests := []struct {
		p    pipeline.ReplayProgress
		rate float64
		want string
	}{
		{pipeline.ReplayProgress{From: 0, To: 100, Begin: 0, Landed: 50}, 10, "[=====>    ] 50/100  50%     10 rec/s ETA 5s"},
		{pipeline.ReplayProgress{From: 0, To: 100, Begin: 40, Landed: 40}, 0, "[>         ] 0/60   0%      0 rec/s ETA -"},
		{pipeline.ReplayProgress{From: 0, To: 10, Begin: 0, Landed: 10, Done: true}, 0, "[==========] 10/10 100%      0 rec/s ETA done"},
		{pipeline.ReplayProgress{From: 5, To: 5, Begin: 5, Landed: 5, Done: true}, 0, "[==========] 0/0 100%      0 rec/s ETA done"},
	}
	for _, tt := range tests {
		if got := Bar(tt.p, tt.rate, 10); got != tt.want {
			t.Errorf("Bar(%+v) = %q, want %q", tt.p, got, tt.want)
		}
	}
}
