package termui

import (
	"math"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/pipeline"
)

// TestReplayRateSettles: a replay reading exactly 2,000 records a second on
// each of two partitions shows that rate, and the ETA it implies, within a
// second of sampling (the view samples every SampleEvery), not a rate that
// creeps up over many report intervals; a partition that stops reading
// drops to 0 within the window.
func TestReplayRateSettles(t *testing.T) {
	v := &ReplayView{last: map[int32]*rateWindow{}}
	t0 := time.Now()
	progress := func(at time.Duration, stalled bool) []pipeline.ReplayProgress {
		n := int64(2000 * at.Seconds())
		p1 := n
		if stalled {
			p1 = 2000 // stopped after the first second
		}
		return []pipeline.ReplayProgress{{Partition: 0, To: 100000, Landed: n}, {Partition: 1, To: 100000, Landed: p1}}
	}
	for at := time.Duration(0); at <= time.Second; at += SampleEvery {
		v.sample(progress(at, false), t0.Add(at))
	}
	for p := int32(0); p < 2; p++ {
		if r := v.rateOf(p); math.Abs(r-2000) > 20 {
			t.Fatalf("partition %d: rate %.0f after 1s of reading 2000/s, want 2000", p, r)
		}
	}
	if got, want := Bar(progress(time.Second, false)[0], v.rateOf(0), 10), "[>         ] 2000/100000   2%   2000 rec/s ETA 49s"; got != want {
		t.Fatalf("bar %q, want %q", got, want)
	}
	for at := time.Second + SampleEvery; at <= time.Second+RateWindow+SampleEvery; at += SampleEvery {
		v.sample(progress(at, true), t0.Add(at))
	}
	if r := v.rateOf(1); r != 0 {
		t.Fatalf("stalled partition: rate %.0f a window after it stopped, want 0", r)
	}
	if r := v.rateOf(0); math.Abs(r-2000) > 20 {
		t.Fatalf("partition 0: rate %.0f, want 2000", r)
	}
}
