package settings

import (
	"slices"
	"testing"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/admin"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/pipeline"
)

// group joins gs into one group, loaded in order.
func group(gs ...cliflags.Group) cliflags.Group {
	var all cliflags.Group
	for _, g := range gs {
		all.Flags = append(all.Flags, g.Flags...)
	}
	all.Load = func(c *cli.Command, bad *cliflags.Problems) {
		for _, g := range gs {
			g.Load(c, bad)
		}
	}
	return all
}

var now = time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)

func TestReplayGroups(t *testing.T) {
	tests := []struct {
		args []string
		want []string
		r    Replay // what loads, Now aside
	}{
		{[]string{"--id= r1 ", "--from=90m"}, nil, Replay{ID: "r1", From: pipeline.AtTime(now.Add(-90 * time.Minute)),
			Given: "--from 90m --to (end) --partition-ids (all)", CheckpointPrefix: pipeline.DefaultReplayPrefix}},
		{[]string{"--id=r", "--from=0", "--to=2026-11-30T04:00:00Z", "--partition-ids=3,0", "--dry-run", "--force", "--rate=2.5", "--checkpoint-prefix=c:"}, nil,
			Replay{ID: "r", From: pipeline.AtOffset(0), To: pipeline.AtTime(time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC)), Partitions: []int32{3, 0},
				Given: "--from 0 --to 2026-11-30T04:00:00Z --partition-ids 0,3", DryRun: true, Force: true, Rate: 2.5, CheckpointPrefix: "c:"}},
		{[]string{"--id=", "--from=", "--to=soon", "--partition-ids=x", "--rate=-1", "--checkpoint-prefix="}, []string{
			"--id (SHARDPIPE_ID): empty; name the replay", "--from (SHARDPIPE_FROM): empty; give an offset", `--to (SHARDPIPE_TO) "soon": want an offset`,
			`--partition-ids (SHARDPIPE_PARTITION_IDS) "x": `, "--rate (SHARDPIPE_RATE) -1: want 0 to 10000000 (0: no limit)", "--checkpoint-prefix (SHARDPIPE_CHECKPOINT_PREFIX): empty"}, Replay{}},
		{[]string{"--id=r", "--from=-5"}, []string{`--from (SHARDPIPE_FROM) "-5": `}, Replay{}},
		// A range whose start is not before its end is empty: refused, not
		// replayed as nothing with every partition done.
		{[]string{"--id=r", "--from=500", "--to=100"}, []string{
			`--from (SHARDPIPE_FROM) "500" is not before --to (SHARDPIPE_TO) "100": offset 500 is not before offset 100`}, Replay{}},
		{[]string{"--id=r", "--from=100", "--to=100"}, []string{`offset 100 is not before offset 100`}, Replay{}},
		{[]string{"--id=r", "--from=30m", "--to=2h"}, []string{
			`--from (SHARDPIPE_FROM) "30m" is not before --to (SHARDPIPE_TO) "2h": 2026-11-30T05:30:00Z is not before 2026-11-30T04:00:00Z`}, Replay{}},
		{[]string{"--id=r", "--from=2026-11-30T05:00:00Z", "--to=2h"}, []string{`2026-11-30T05:00:00Z is not before 2026-11-30T04:00:00Z`}, Replay{}},
		{[]string{"--id=r", "--from=2h", "--to=30m"}, nil, Replay{ID: "r", From: pipeline.AtTime(now.Add(-2 * time.Hour)),
			To: pipeline.AtTime(now.Add(-30 * time.Minute)), Given: "--from 2h --to 30m --partition-ids (all)", CheckpointPrefix: pipeline.DefaultReplayPrefix}},
		// An offset and a time compare only on the topic: not refused here.
		{[]string{"--id=r", "--from=500", "--to=2h"}, nil, Replay{ID: "r", From: pipeline.AtOffset(500),
			To: pipeline.AtTime(now.Add(-2 * time.Hour)), Given: "--from 500 --to 2h --partition-ids (all)", CheckpointPrefix: pipeline.DefaultReplayPrefix}},
	}
	for _, tt := range tests {
		r := Replay{Now: now}
		bad := load(t, group(ReplayRangeGroup(&r), PartitionsGroup(&r.Partitions, "p"), ReplayRunGroup(&r)), tt.args...)
		checkProblems(t, tt.args, bad, tt.want...)
		if len(tt.want) > 0 {
			continue
		}
		if r.ID != tt.r.ID || r.From.String() != tt.r.From.String() || r.To.String() != tt.r.To.String() || !slices.Equal(r.Partitions, tt.r.Partitions) ||
			r.Given != tt.r.Given || r.DryRun != tt.r.DryRun || r.Force != tt.r.Force || r.Rate != tt.r.Rate || r.CheckpointPrefix != tt.r.CheckpointPrefix {
			t.Errorf("%q: loaded %+v, want %+v", tt.args, r, tt.r)
		}
	}
	var r Replay // no Now given: the time of loading
	before := time.Now()
	checkProblems(t, nil, load(t, ReplayRangeGroup(&r), "--id=r", "--from=1h"))
	if r.Now.Before(before) || r.Now.After(time.Now()) {
		t.Errorf("Now %v: want the time the flags loaded", r.Now)
	}
}

// TestPartitionsGroupRefusesCount: SHARDPIPE_PARTITIONS is produce's
// count; read as a list it would limit a recovery to one partition.
func TestPartitionsGroupRefusesCount(t *testing.T) {
	t.Setenv("SHARDPIPE_PARTITIONS", "2")
	var ps []int32
	args := []string{"--partition-ids=1"}
	checkProblems(t, args, load(t, PartitionsGroup(&ps, "p"), args...),
		`SHARDPIPE_PARTITIONS="2" is set: it is the partition count of produce and bench, not partitions to work on; name those with --partition-ids (SHARDPIPE_PARTITION_IDS), and unset SHARDPIPE_PARTITIONS`)
}

func TestResetGroups(t *testing.T) {
	tests := []struct {
		args []string
		want []string
		r    Reset
	}{
		{[]string{"--to=earliest"}, nil, Reset{To: admin.Earliest()}},
		{[]string{"--to= latest ", "--partition-ids=2", "--dry-run", "--force", "--create"}, nil,
			Reset{To: admin.Latest(), Partitions: []int32{2}, DryRun: true, Force: true, Create: true}},
		{[]string{"--to=42"}, nil, Reset{To: admin.ToBound(pipeline.AtOffset(42))}},
		{nil, []string{"--to (SHARDPIPE_TO): empty; want earliest, latest, an offset, an RFC 3339 time or a duration ago"}, Reset{}},
		{[]string{"--to=first"}, []string{`--to (SHARDPIPE_TO) "first": want an offset (0), an RFC 3339 time (2026-11-30T04:00:00Z) or a duration ago (90m), or earliest or latest`}, Reset{}},
	}
	for _, tt := range tests {
		var r Reset
		bad := load(t, group(ResetGroups(&r)...), tt.args...)
		checkProblems(t, tt.args, bad, tt.want...)
		if len(tt.want) == 0 && (r.To != tt.r.To || !slices.Equal(r.Partitions, tt.r.Partitions) || r.DryRun != tt.r.DryRun ||
			r.Force != tt.r.Force || r.Create != tt.r.Create) {
			t.Errorf("%q: loaded %+v, want %+v", tt.args, r, tt.r)
		}
	}
}

func TestParseTarget(t *testing.T) {
	tests := []struct {
		in   string
		want admin.Target
		err  bool
	}{
		{"earliest", admin.Earliest(), false},
		{"latest", admin.Latest(), false},
		{"0", admin.ToBound(pipeline.AtOffset(0)), false},
		{"2026-11-30T04:00:00Z", admin.ToBound(pipeline.AtTime(time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC))), false},
		{"30m", admin.ToBound(pipeline.AtTime(now.Add(-30 * time.Minute))), false},
		{"Earliest", admin.Target{}, true},
		{"-1", admin.Target{}, true},
		{"", admin.Target{}, true},
	}
	for _, tt := range tests {
		got, err := ParseTarget(tt.in, now)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ParseTarget(%q) = %+v, %v; want %+v, error %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}
