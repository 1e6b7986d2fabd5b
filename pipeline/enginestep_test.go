package pipeline

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/sink"
)

// stepSituation is an engine in one of the situations a loop decides in,
// built as the worker builds it, and the time of the decision.
type stepSituation struct {
	name string
	e    *engine
	now  time.Time
}

// stepSituations are the engine situations TestEngineStepExhaustive
// decides in, for one schedule: no records yet; records read and none
// landed; some landed, no commit due; the policy's Max landed and its
// commit due; Max landed and the commit failed (waiting for its retry).
func stepSituations(t *testing.T, inFlight bool) []stepSituation {
	t.Helper()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cfg := config{maxBatch: 4, queueRecords: 8, policy: checkpoint.Policy{Every: 4, Max: 6, Interval: time.Second},
		retry: sink.Backoff{Initial: 100 * time.Millisecond, Max: time.Second}}
	if inFlight {
		cfg.maxInFlight = 4
	}
	build := func(read, landed int, failed bool) *engine {
		e := newEngine(&cfg, nil)
		if read == 0 {
			return e
		}
		e.begin(checkpoint.Partition{Topic: "t"}, 0)
		for o := int64(0); o < int64(read); o++ {
			if err := e.read(o, 0); err != nil {
				t.Fatal(err)
			}
		}
		for o := int64(0); o < int64(landed); o++ {
			if err := e.landed(&sink.Record{Topic: "t", Offset: o}, sink.Result{Outcome: sink.Applied}, 0, t0); err != nil {
				t.Fatal(err)
			}
		}
		if failed {
			e.commitFailed(t0)
		}
		return e
	}
	now := t0.Add(10 * time.Millisecond)
	return []stepSituation{
		{"no records", build(0, 0, false), now},
		{"read, none landed", build(6, 0, false), now},
		{"some landed", build(6, 2, false), now},
		{"max landed, commit due", build(6, 6, false), now},
		{"max landed, commit failed", build(6, 6, true), now},
	}
}

// TestEngineStepExhaustive decides a step in every small loop state (every
// mode, fenced or not, queue empty, short or long, and with MaxInFlight
// every combination of frozen, held, running, waiting, crash and fatal)
// in every situation of stepSituations, in both schedules, and checks the
// step's invariants (checkStep) for each.
func TestEngineStepExhaustive(t *testing.T) {
	n := 0
	for _, inFlight := range []bool{false, true} {
		for _, sit := range stepSituations(t, inFlight) {
			for _, s := range loopStates(inFlight) {
				st := s.decide(sit.e, sit.now)
				if msg := checkStep(sit.e, s, st, sit.now); msg != "" {
					t.Fatalf("in flight %v, %s, %+v: %+v (then %v): %s", inFlight, sit.name, s, st, st.then, msg)
				}
				n++
			}
		}
	}
	t.Logf("%d steps checked", n)
}

// stepState is a loop state and how the term ends (the engine's termEnd:
// frozen, a crash point reached, a failure to end with).
type stepState struct {
	loopState
	frozen, crash, fatal bool
}

// decide is e's next step in s at now: e's termEnd is set from s for the
// decision and put back after it.
func (s stepState) decide(e *engine, now time.Time) step {
	saved := e.end
	defer func() { e.end = saved }()
	e.end.frozen, e.end.crash, e.end.fatal = s.frozen, s.crash, nil
	if s.fatal {
		e.end.fatal = errors.New("fatal")
	}
	return e.next(s.loopState, now)
}

// loopStates are the small loop states of one schedule (with MaxInFlight,
// only consistent ones: waiting and running within held).
func loopStates(inFlight bool) []stepState {
	var out []stepState
	for mode := running; mode <= revoking; mode++ {
		for _, fenced := range []bool{false, true} {
			for _, queued := range []int{0, 3, 9} {
				base := stepState{loopState: loopState{mode: mode, fenced: fenced, queued: queued}}
				if !inFlight {
					out = append(out, base)
					continue
				}
				for bits := 0; bits < 8; bits++ {
					for held := 0; held <= 3; held++ {
						for running := 0; running <= held; running++ {
							for waiting := 0; waiting <= held-running; waiting++ {
								s := base
								s.frozen, s.crash, s.fatal = bits&1 != 0, bits&2 != 0, bits&4 != 0
								s.held, s.running, s.waiting = held, running, waiting
								out = append(out, s)
							}
						}
					}
				}
			}
		}
	}
	return out
}

// checkStep returns what is wrong with step st decided by e in state s at
// now ("" when nothing is).
func checkStep(e *engine, s stepState, st step, now time.Time) string {
	ends := st.then == thenExit || st.then == thenFinish || st.then == thenCrash || st.then == thenFatal
	stopped := s.mode == revoking || s.fenced
	room := e.room(e.maxBatch)
	if e.inFlight {
		room = e.admitRoom(e.queueRecords, s.held)
	}
	switch {
	case ends && s.running > 0:
		return fmt.Sprintf("ends the loop while %d effects run", s.running)
	case st.take > 0 && (s.frozen || stopped || st.freeze || st.start && !e.inFlight):
		return "takes or starts records after a revoke, a fence or a freeze"
	case st.start && (s.frozen || stopped || !e.inFlight):
		return "takes or starts records after a revoke, a fence or a freeze"
	case st.take > 0 && (st.take > s.queued || st.take > room):
		return fmt.Sprintf("takes %d with %d queued and room for %d", st.take, s.queued, room)
	case st.then == thenLoop && st.take == 0 && !st.freeze && !st.giveUp:
		return "loops with nothing done: it would spin"
	case !e.inFlight && stopped && st.then != thenExit:
		return "batches after a revoke or a fence do not end"
	case e.inFlight && stopped && !s.frozen && !st.freeze:
		return "a revoke or a fence does not freeze the partition"
	case e.inFlight && givingUp(s.mode) && s.waiting > 0 && !st.giveUp && !st.freeze:
		return "a stop that gives up keeps records waiting for a retry"
	case e.inFlight && st.giveUp && !givingUp(s.mode):
		return "gives up retries a finishing replay still owes"
	case e.inFlight && s.running == 0 && s.crash && (ends || st.then == thenWait) && st.then != thenCrash && !st.freeze && !st.giveUp:
		return "a crash point ends as fatal, an exit or a wait, not as a crash"
	case e.inFlight && st.then == thenCrash && !s.crash, e.inFlight && st.then == thenFatal && !s.fatal:
		return "ends as a crash or a failure that did not happen"
	case st.then == thenWait && e.dueAt(now):
		return "waits past a due commit"
	case st.then == thenBound && (e.inFlight || room > 0 || !st.at.After(now)):
		return "waits at a bound it has not reached, or past a due commit"
	}
	// Nothing left: a drain ends, a finished range finishes.
	nothingLeft := s.queued == 0 && s.held == 0 && s.running == 0 && !stopped && !s.frozen && !s.crash && !s.fatal
	if !e.inFlight {
		nothingLeft = s.queued == 0 && !stopped && room > 0
	}
	switch {
	case nothingLeft && s.mode == draining && st.then != thenExit:
		return "a drain with nothing left does not end"
	case nothingLeft && s.mode == finishing && st.then != thenFinish:
		return "a finished range with nothing left does not finish"
	case st.then == thenFinish && !nothingLeft:
		return "finishes a range with records left"
	case st.then == thenFinish && s.mode != finishing:
		return "finishes when not finishing a range"
	}
	return ""
}
