package main

import (
	"strings"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/pipeline"
)

func TestParseBound(t *testing.T) {
	now := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	tests := []struct {
		in      string
		want    pipeline.Bound
		wantErr string
	}{
		{"0", pipeline.AtOffset(0), ""},
		{"1234", pipeline.AtOffset(1234), ""},
		{"2026-11-30T04:00:00Z", pipeline.AtTime(time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC)), ""},
		{"2026-11-30T05:00:00.250+01:00", pipeline.AtTime(time.Date(2026, 11, 30, 4, 0, 0, 250e6, time.UTC)), ""},
		{"90m", pipeline.AtTime(now.Add(-90 * time.Minute)), ""},
		{"-5", pipeline.Bound{}, "negative"},
		{"-5m", pipeline.Bound{}, "positive duration"},
		{"yesterday", pipeline.Bound{}, "want an offset"},
		{"2026-11-30", pipeline.Bound{}, "want an offset"},
	}
	for _, tt := range tests {
		got, err := parseBound(tt.in, now)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseBound(%q) error %v, want one containing %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got.String() != tt.want.String() {
			t.Errorf("parseBound(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

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
		if got := bar(tt.p, tt.rate, 10); got != tt.want {
			t.Errorf("bar(%+v) = %q, want %q", tt.p, got, tt.want)
		}
	}
}
