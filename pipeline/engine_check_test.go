package pipeline

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/sink"
)

// TestEngineInvariants drives the engine with random interleavings of
// both schedules (records read, landed in any order with MaxInFlight and in
// order in batches, failed for good, ledger losses counted, commits that
// land or fail, two partitions sharing the pipeline's sum of failures) and
// checks, against a model of its own, after every step:
//
//   - no commit point passes a record whose effect has not landed (read,
//     not landed, held);
//   - after a loss is counted, every record landed since the last commit
//     and applied before the loss is applied again before a commit passes
//     it, and no other record is;
//   - the storm bound holds for every record that failed for good: one
//     that a success at a later offset of its partition already followed
//     is dead-lettered at once; any other is held until a later record
//     succeeds, which releases exactly the held records below it in
//     offset order, or until its partition, after a success, has held
//     nothing new for the idle time (then all are dead-lettered and stay
//     in the run until a success), and the pipeline stops exactly at the
//     record that makes the sum of those runs exceed DeadLetterMaxRun;
//   - every credited record (its effect ran here, or its claim names an
//     earlier term at or past the group's mark) counts in Applied once,
//     and no other record does.
func TestEngineInvariants(t *testing.T) {
	seeds := 3000
	if testing.Short() {
		seeds = 300
	}
	for seed := range seeds {
		if err := checkEngine(uint64(seed)); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}

// modelPart is the checker's own account of one partition.
type modelPart struct {
	next      int64            // the next offset to read
	open      []int64          // read, not landed, not failed: by offset
	held      []int64          // failed for good, held
	landed    map[int64]bool   // landed (success, dead letter, marker)
	appliedAt map[int64]uint64 // successes not committed past: the loss count of their last apply
	credited  map[int64]bool
	counted   map[int64]bool
	committed int64
	best      int64 // the highest offset that succeeded; -1: none
	run       int   // failures with no later success: held, or dead-lettered idle
	lastHold  time.Time
	stormed   bool // stopped on a storm: no more records settle
}

func checkEngine(seed uint64) error {
	rnd := rand.New(rand.NewPCG(seed, 0x5eed))
	r := newEngineRig()
	r.cfg = config{maxBatch: 500, retry: sink.Backoff{Initial: 100 * time.Millisecond, Max: 5 * time.Second}}
	inFlight := rnd.IntN(2) == 0
	if inFlight {
		r.cfg.maxInFlight = 4
	}
	r.cfg.policy = checkpoint.Policy{Every: rnd.IntN(5), Max: []int{0, 3, 6}[rnd.IntN(3)]}
	if rnd.IntN(2) == 0 {
		r.cfg.barrier = lossCounter{r}
	}
	maxRun := rnd.IntN(5)
	r.dlq = &deadLetterConfig{maxRun: maxRun}
	r.mark = int64(rnd.IntN(16)) - 1
	const records = 14
	idleTime := defaultConfig().policy.Interval // the checker's policy has no interval
	parts := []int32{0, 1}
	m := map[int32]*modelPart{}
	for _, p := range parts {
		m[p] = &modelPart{best: -1, landed: map[int64]bool{}, appliedAt: map[int64]uint64{}, credited: map[int64]bool{}, counted: map[int64]bool{}}
		r.part(p).begin(checkpoint.Partition{Topic: "t", Partition: p}, 0)
	}
	losses := r.cfg.barrier != nil
	var trace []string
	fail := func(format string, args ...any) error {
		return fmt.Errorf("inflight=%v policy=%+v losses=%v maxrun=%d mark=%d: %s\ntrace:\n  %s", inFlight, r.cfg.policy,
			losses, maxRun, r.mark, fmt.Sprintf(format, args...), joinTrace(trace))
	}
	failing := func() int {
		n := 0
		for _, mp := range m {
			n += mp.run
		}
		return n
	}
	for step := 0; step < 200; step++ {
		p := parts[rnd.IntN(len(parts))]
		e, mp := r.part(p), m[p]
		switch k := rnd.IntN(10); {
		case k < 3 && mp.next < records: // read
			if err := e.read(mp.next, 0); err != nil {
				return fail("read %d: %v", mp.next, err)
			}
			trace = append(trace, fmt.Sprintf("p%d read %d", p, mp.next))
			mp.open = append(mp.open, mp.next)
			mp.next++
		case k < 6 && len(mp.open) > 0 && !mp.stormed: // settle one
			i := 0
			if inFlight {
				i = rnd.IntN(len(mp.open))
			}
			off := mp.open[i]
			mp.open = slices.Delete(mp.open, i, i+1)
			if rnd.IntN(4) == 0 {
				v, storm, err := r.fail(p, off)
				if err != nil {
					return fail("fail %d: %v", off, err)
				}
				trace = append(trace, fmt.Sprintf("p%d fail %d: %v", p, off, v))
				if maxRun == 0 || off < mp.best { // no bound, or a poison record between good ones
					if v != stormDeadLetter {
						return fail("p%d fail %d: verdict %v, want dead-lettered (bound %d, a success at %d)", p, off, v, maxRun, mp.best)
					}
					mp.landed[off] = true
					break
				}
				mp.run++
				mp.lastHold = r.now
				over := failing() > maxRun
				switch {
				case over != (v == stormStop):
					return fail("p%d fail %d: verdict %v with %d failing over the pipeline, bound %d", p, off, v, failing(), maxRun)
				case v == stormStop:
					if storm == nil || storm.Run != failing() {
						return fail("p%d storm %+v, want Run %d", p, storm, failing())
					}
					mp.stormed = true
				case v != stormHold:
					return fail("p%d fail %d: verdict %v, want held until a later success (best %d)", p, off, v, mp.best)
				}
				mp.held = append(mp.held, off) // unlanded
				break
			}
			o := []sink.Outcome{sink.Applied, sink.Suppressed, sink.Redelivered}[rnd.IntN(3)]
			lossAt := r.losses
			if rnd.IntN(3) == 0 && lossAt > 0 {
				lossAt-- // it started before the last loss and ran across it
			}
			released, storm, err := r.succeed(p, off, o, lossAt)
			if err != nil || storm != nil {
				return fail("land %d: %v %v", off, err, storm)
			}
			trace = append(trace, fmt.Sprintf("p%d land %d %v lossat=%d released %v", p, off, o, lossAt, released))
			if !mp.stormed {
				slices.Sort(mp.held)
				var below, kept []int64
				for _, h := range mp.held {
					if h < off {
						below = append(below, h)
						mp.landed[h] = true
					} else {
						kept = append(kept, h)
					}
				}
				if !slices.Equal(released, below) {
					return fail("p%d land %d released %v, want the held records below it %v", p, off, released, below)
				}
				mp.held, mp.run, mp.best = kept, len(kept), max(mp.best, off) // those dead-lettered idle leave the run too
			}
			mp.landed[off] = true
			mp.appliedAt[off] = lossAt
			if o == sink.Applied || o == sink.Redelivered && off >= r.mark {
				mp.credited[off] = true
			}
		case k < 7 && losses: // a loss counted
			r.losses++
			trace = append(trace, fmt.Sprintf("loss %d", r.losses))
		case k < 9: // commit
			point := e.tr.CommitPoint()
			var want []int64
			for off, at := range mp.appliedAt {
				if off < point && at != r.losses && losses {
					want = append(want, off)
				}
			}
			slices.Sort(want)
			again, got, counted, ok, err := r.commit(p)
			if err != nil {
				return fail("p%d commit: %v", p, err)
			}
			slices.Sort(again)
			trace = append(trace, fmt.Sprintf("p%d commit %d ok=%v again %v counted %d", p, got, ok, again, counted))
			if !ok {
				if point != mp.committed {
					return fail("p%d: nothing to commit at point %d, last committed %d", p, point, mp.committed)
				}
				break
			}
			if !slices.Equal(again, want) && len(again)+len(want) > 0 {
				return fail("p%d commit %d applied again %v, want %v", p, got, again, want)
			}
			wantCount := 0
			for off := range mp.credited {
				if off < got && !mp.counted[off] {
					mp.counted[off] = true
					wantCount++
				}
			}
			if counted != wantCount {
				return fail("p%d commit %d counted %d, want %d", p, got, counted, wantCount)
			}
			for off := range mp.appliedAt {
				if off < got {
					delete(mp.appliedAt, off)
				}
			}
			mp.committed = got
		case k == 9 && rnd.IntN(3) == 0: // time passes; records held with no success after them dead-lettered idle
			r.now = r.now.Add(time.Duration(rnd.IntN(8)) * time.Second)
			released, storm, err := r.release(e, e.idle(r.now), true)
			if err != nil || storm != nil {
				return fail("p%d idle: %v %v", p, err, storm)
			}
			trace = append(trace, fmt.Sprintf("p%d idle at %v released %v", p, r.now.Sub(r.t0), released))
			var want []int64
			if !mp.stormed && mp.best >= 0 && len(mp.held) > 0 && !r.now.Before(mp.lastHold.Add(idleTime)) {
				want = slices.Sorted(slices.Values(mp.held))
			}
			if !slices.Equal(released, want) {
				return fail("p%d idle released %v, want %v", p, released, want)
			}
			for _, h := range want {
				mp.landed[h] = true
			}
			if want != nil {
				mp.held = nil // still in the run until a later success
			}
		default:
			e.commitFailed(r.now)
			r.now = r.now.Add(time.Duration(rnd.IntN(300)) * time.Millisecond)
			trace = append(trace, "commit failed; time passes")
		}
		// No commit point passes a record not landed.
		for _, q := range parts {
			eq, mq := r.part(q), m[q]
			limit := mq.next
			for _, o := range append(slices.Clone(mq.open), mq.held...) {
				limit = min(limit, o)
			}
			if pt := eq.tr.CommitPoint(); pt > limit || mq.committed > limit {
				return fail("p%d: commit point %d, committed %d, past %d, which has not landed", q, pt, mq.committed, limit)
			}
			if r.failing != failing() {
				return fail("the rig's sum of failures %d, the model's %d", r.failing, failing())
			}
		}
	}
	// Every credited record below the final commit counted once.
	for _, p := range parts {
		if _, _, _, _, err := r.commit(p); err != nil {
			return fail("final commit: %v", err)
		}
		point := r.part(p).tr.LastCommitted()
		want := 0
		for off := range m[p].credited {
			if off < point {
				want++
			}
		}
		if r.applied[p] != want {
			return fail("p%d: applied %d over the term, want the %d credited records below %d", p, r.applied[p], want, point)
		}
	}
	return nil
}

func joinTrace(tr []string) string {
	if len(tr) > 40 {
		tr = append([]string{"..."}, tr[len(tr)-40:]...)
	}
	return strings.Join(tr, "\n  ")
}
