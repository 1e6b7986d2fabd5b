package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/sink"
)

// engineRig drives engines as the worker does, with no servers and no
// clock: the pipeline's sum of failures (runner.failing), the loss count
// of a LossReporter and the time are its own. Several partitions share
// the sum, as the partitions of one pipeline do.
type engineRig struct {
	t0      time.Time
	now     time.Time
	losses  uint64
	failing int
	parts   map[int32]*engine
	cfg     config
	dlq     *deadLetterConfig
	applied map[int32]int // Applied counted, per partition
	mark    int64         // the group's commit mark the engines start with
}

func newEngineRig() *engineRig {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return &engineRig{t0: t0, now: t0, parts: map[int32]*engine{}, applied: map[int32]int{}, mark: -1}
}

// part returns partition p's engine, starting it under the rig's config.
func (r *engineRig) part(p int32) *engine {
	e, ok := r.parts[p]
	if !ok {
		e = newEngine(&r.cfg, r.dlq)
		e.mark = r.mark
		r.parts[p] = e
	}
	return e
}

func rec(p int32, off int64) *sink.Record { return &sink.Record{Topic: "t", Partition: p, Offset: off} }

// succeed is a record of partition p at off that succeeded with outcome
// o, first applied at loss count lossAt: the held records are released
// first (dead-lettered, each through the share bound), as the worker's
// land does. It returns the offsets released and the storm that stopped
// a release, if any.
func (r *engineRig) succeed(p int32, off int64, o sink.Outcome, lossAt uint64) ([]int64, *PoisonStormError, error) {
	e := r.part(p)
	hs, left, ok := e.succeed(off)
	var released []int64
	if ok {
		r.failing -= left
		var storm *PoisonStormError
		var err error
		if released, storm, err = r.release(e, hs, false); storm != nil || err != nil {
			return released, storm, err
		}
		e.released()
	}
	return released, nil, e.landed(rec(p, off), sink.Result{Outcome: o}, lossAt, r.now)
}

// release dead-letters hs as the worker's release does: each through the
// share bound; those it could not write are held again, back in the
// pipeline's sum (aside: in the partition's run, which they never left).
func (r *engineRig) release(e *engine, hs []heldRecord, aside bool) (released []int64, storm *PoisonStormError, err error) {
	for i, h := range hs {
		if storm := e.deadLetterAllowed(h); storm != nil {
			if aside {
				e.storms.aside -= len(hs[i:])
			} else {
				r.failing += len(hs[i:])
			}
			for _, h := range hs[i:] {
				e.storms.hold(h)
			}
			return released, storm, nil
		}
		if err := e.deadLettered(h.r.Offset, r.now); err != nil {
			return released, nil, err
		}
		released = append(released, h.r.Offset)
	}
	return released, nil, nil
}

// fail is a record of partition p at off that failed for good: the
// engine's verdict, dead-lettering it at once when so decided.
func (r *engineRig) fail(p int32, off int64) (stormVerdict, *PoisonStormError, error) {
	e := r.part(p)
	h := heldRecord{r: *rec(p, off), cause: fmt.Errorf("offset %d: %w", off, sink.ErrBadValue), attempts: 1}
	v, storm := e.failed(h, func() int { r.failing++; return r.failing }, r.now)
	if v == stormDeadLetter {
		if s := e.deadLetterAllowed(h); s != nil {
			return stormStop, s, nil
		}
		return v, nil, e.deadLettered(off, r.now)
	}
	return v, storm, nil
}

// commit commits partition p's engine as the worker does: the records a
// loss may have taken are applied again first (they are known at once
// here), the Applied count taken, the commit noted. It returns the
// offsets applied again, the point and the count.
func (r *engineRig) commit(p int32) (again []int64, point int64, counted int, ok bool, err error) {
	e := r.part(p)
	if !e.dirty() {
		return nil, 0, 0, false, nil
	}
	point = e.tr.CommitPoint()
	idx := e.exposed(point, r.losses)
	for _, i := range idx {
		again = append(again, e.redo[i].r.Offset)
	}
	e.reapplied(idx, r.losses)
	if e.lost(point, r.losses) {
		return again, point, 0, false, fmt.Errorf("a loss still exposes records below %d after %v were applied again", point, again)
	}
	counted = e.countBelow(point)
	r.applied[p] += counted
	e.committed(point, r.now)
	return again, point, counted, true, nil
}

// TestEngineScripts runs the engine's scripts, testdata/engine/*.txt (see
// engineCmd for the commands); go test -run TestEngineScripts -rewrite
// writes the outputs anew.
func TestEngineScripts(t *testing.T) {
	datadriven.Walk(t, "testdata/engine", func(t *testing.T, path string) {
		r := newEngineRig()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			out, err := r.cmd(d)
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			return out
		})
	})
}

// cmd runs one script command. Every command but config takes p=N (the
// partition, default 0) and at=D (the time since the script's start, for
// what it notes; the clock only moves forward).
//
//	config [inflight] [every=N] [interval=D] [max=N] [batch=N] [queue=N] [losses] [maxrun=N] [share=F window=N] [mark=N]
//	read from..to          records read from the partition (the first starts the tracker)
//	land off... [outcome=applied|suppressed|redelivered] [lossat=N]
//	marker off             a transaction marker
//	fail off...            records that failed for good
//	loss                   the ledger's loss count moves
//	due                    when the next commit is due
//	commit                 commit at the commit point (records a loss may have taken applied again first)
//	commit-failed          a commit that failed, to retry after the backoff
//	end                    the term ends: the run of failures and what is held
//	at-end                 a replay's partition read its range to the end
//	idle                   when held records are dead-lettered idle, and those due now
//	step [mode=M] [fenced] [queued=N] [frozen] [held=N] [running=N] [waiting=N] [crash] [fatal]
//	                       the loop's next step in that state (mode: running, finishing, draining, revoking)
//	state
func (r *engineRig) cmd(d *datadriven.TestData) (string, error) {
	p := int32(0)
	var offs []int64
	outcome, lossAt := sink.Applied, r.losses
	for _, a := range d.CmdArgs {
		v := ""
		if len(a.Vals) > 0 {
			v = a.Vals[0]
		}
		switch a.Key {
		case "p":
			n, err := strconv.Atoi(v)
			if err != nil {
				return "", err
			}
			p = int32(n)
		case "at":
			at, err := time.ParseDuration(v)
			if err != nil {
				return "", err
			}
			if now := r.t0.Add(at); now.After(r.now) {
				r.now = now
			}
		case "outcome":
			outcome = map[string]sink.Outcome{"applied": sink.Applied, "suppressed": sink.Suppressed, "redelivered": sink.Redelivered}[v]
		case "lossat":
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return "", err
			}
			lossAt = n
		default:
			if d.Cmd == "config" || d.Cmd == "step" {
				continue
			}
			from, to, isRange := strings.Cut(a.Key, "..")
			lo, err := strconv.ParseInt(from, 10, 64)
			if err != nil {
				return "", fmt.Errorf("argument %q", a.Key)
			}
			hi := lo
			if isRange {
				if hi, err = strconv.ParseInt(to, 10, 64); err != nil {
					return "", fmt.Errorf("argument %q", a.Key)
				}
			}
			for o := lo; o <= hi; o++ {
				offs = append(offs, o)
			}
		}
	}
	var b strings.Builder
	switch d.Cmd {
	case "config":
		if err := r.configure(d); err != nil {
			return "", err
		}
		return "ok\n", nil
	case "read":
		e := r.part(p)
		if len(offs) > 0 {
			e.begin(checkpoint.Partition{Topic: "t", Partition: p}, offs[0])
		}
		for _, o := range offs {
			if err := e.read(o, 0); err != nil {
				return "", err
			}
		}
	case "land":
		for _, o := range offs {
			released, storm, err := r.succeed(p, o, outcome, lossAt)
			if err != nil {
				return "", err
			}
			if len(released) > 0 {
				fmt.Fprintf(&b, "dead-lettered %v\n", released)
			}
			if storm != nil {
				fmt.Fprintf(&b, "storm: %v\n", storm)
			}
		}
	case "marker":
		for _, o := range offs {
			if err := r.part(p).landMarker(o, r.now); err != nil {
				return "", err
			}
		}
	case "fail":
		for _, o := range offs {
			v, storm, err := r.fail(p, o)
			if err != nil {
				return "", err
			}
			fmt.Fprintf(&b, "%d: %s\n", o, [...]string{"held", "dead-lettered", "storm"}[v])
			if storm != nil {
				fmt.Fprintf(&b, "storm: %v\n", storm)
			}
		}
	case "loss":
		r.losses++
		fmt.Fprintf(&b, "loss count %d\n", r.losses)
	case "due":
		e := r.part(p)
		at, ok := e.due()
		switch {
		case !ok:
			b.WriteString("not due\n")
		default:
			fmt.Fprintf(&b, "due at %v (now %v): %v\n", at.Sub(r.t0), r.now.Sub(r.t0), !at.After(r.now))
		}
	case "commit":
		again, point, counted, ok, err := r.commit(p)
		if err != nil {
			return "", err
		}
		if !ok {
			b.WriteString("nothing to commit\n")
			break
		}
		if len(again) > 0 {
			fmt.Fprintf(&b, "applied again %v\n", again)
		}
		fmt.Fprintf(&b, "committed %d, counted %d\n", point, counted)
	case "commit-failed":
		n, backoff := r.part(p).commitFailed(r.now)
		fmt.Fprintf(&b, "failures %d, retry in %v\n", n, backoff)
	case "end":
		run, held := r.part(p).endRun()
		r.failing -= run
		fmt.Fprintf(&b, "run %d, held %v\n", run, heldOffsets(held))
	case "at-end":
		e := r.part(p)
		storm, _, release := e.atEnd()
		r.failing -= len(release)
		switch released, rstorm, err := r.release(e, release, false); {
		case err != nil:
			return "", err
		case rstorm != nil:
			fmt.Fprintf(&b, "storm: %v\n", rstorm)
		case storm != nil:
			fmt.Fprintf(&b, "storm: %v\n", storm)
		case len(released) > 0:
			fmt.Fprintf(&b, "dead-lettered %v\n", released)
		default:
			b.WriteString("nothing held\n")
		}
	case "idle":
		e := r.part(p)
		if at, ok := e.idleAt(); ok {
			fmt.Fprintf(&b, "idle at %v (now %v)\n", at.Sub(r.t0), r.now.Sub(r.t0))
		}
		switch released, storm, err := r.release(e, e.idle(r.now), true); {
		case err != nil:
			return "", err
		case storm != nil:
			fmt.Fprintf(&b, "storm: %v\n", storm)
		case len(released) > 0:
			fmt.Fprintf(&b, "dead-lettered %v\n", released)
		}
	case "step":
		s, err := loopStateOf(d)
		if err != nil {
			return "", err
		}
		b.WriteString(r.stepLine(s.decide(r.part(p), r.now)))
	case "state":
	default:
		return "", fmt.Errorf("unknown command %q", d.Cmd)
	}
	b.WriteString(r.state(p))
	return b.String(), nil
}

// configure sets the config of the engines started from now on.
func (r *engineRig) configure(d *datadriven.TestData) error {
	r.cfg = config{maxBatch: 500, queueRecords: 1000, retry: sink.Backoff{Initial: 100 * time.Millisecond, Max: 5 * time.Second}}
	r.dlq = nil
	r.parts, r.applied, r.failing = map[int32]*engine{}, map[int32]int{}, 0
	var mark int64 = -1
	for _, a := range d.CmdArgs {
		v := ""
		if len(a.Vals) > 0 {
			v = a.Vals[0]
		}
		var n int
		switch a.Key {
		case "every", "max", "maxrun", "window", "mark", "batch", "queue":
			var err error
			if n, err = strconv.Atoi(v); err != nil {
				return fmt.Errorf("config %s=%q: %v", a.Key, v, err)
			}
		}
		switch a.Key {
		case "inflight":
			r.cfg.maxInFlight = 4
		case "every":
			r.cfg.policy.Every = n
		case "max":
			r.cfg.policy.Max = n
		case "interval":
			iv, err := time.ParseDuration(v)
			if err != nil {
				return fmt.Errorf("config interval=%q: %v", v, err)
			}
			r.cfg.policy.Interval = iv
		case "losses":
			r.cfg.barrier = lossCounter{r}
		case "maxrun":
			r.dlqConfigured().maxRun = n
		case "share":
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return fmt.Errorf("config share=%q: %v", v, err)
			}
			r.dlqConfigured().maxShare = f
		case "window":
			r.dlqConfigured().window = n
		case "mark":
			mark = int64(n)
		case "batch":
			r.cfg.maxBatch = n
		case "queue":
			r.cfg.queueRecords = n
		default:
			return fmt.Errorf("config: unknown argument %q", a.Key)
		}
	}
	r.mark = mark
	return nil
}

func (r *engineRig) dlqConfigured() *deadLetterConfig {
	if r.dlq == nil {
		r.dlq = &deadLetterConfig{}
	}
	return r.dlq
}

// lossCounter is the rig's LossReporter.
type lossCounter struct{ r *engineRig }

func (lossCounter) Wait(context.Context) error { return nil }
func (l lossCounter) Losses() uint64           { return l.r.losses }

// state prints partition p's engine.
func (r *engineRig) state(p int32) string {
	e := r.part(p)
	if e.tr == nil {
		return "no records\n"
	}
	var redo []string
	for _, x := range e.redo {
		redo = append(redo, fmt.Sprintf("%d@%d", x.r.Offset, x.lossAt))
	}
	un := slices.Clone(e.uncounted)
	slices.Sort(un)
	return fmt.Sprintf("point %d committed %d landed-since %d folded %d | redo [%s] uncounted %v applied %d | held %v run %d failing %d\n",
		e.tr.CommitPoint(), e.tr.LastCommitted(), e.tr.LandedSinceCommit(), e.tr.Folded(),
		strings.Join(redo, " "), un, r.applied[p], heldOffsets(e.storms.held), len(e.storms.held)+e.storms.aside, r.failing)
}

func heldOffsets(hs []heldRecord) []int64 {
	out := make([]int64, len(hs))
	for i, h := range hs {
		out[i] = h.r.Offset
	}
	return out
}

// loopStateOf is the loop state a step command names.
func loopStateOf(d *datadriven.TestData) (stepState, error) {
	var s stepState
	for _, a := range d.CmdArgs {
		v := ""
		if len(a.Vals) > 0 {
			v = a.Vals[0]
		}
		n := 0
		switch a.Key {
		case "queued", "held", "running", "waiting":
			var err error
			if n, err = strconv.Atoi(v); err != nil {
				return s, fmt.Errorf("step %s=%q: %v", a.Key, v, err)
			}
		}
		switch a.Key {
		case "p", "at":
		case "mode":
			m, ok := map[string]int32{"running": running, "finishing": finishing, "draining": draining, "revoking": revoking}[v]
			if !ok {
				return s, fmt.Errorf("step mode=%q: unknown mode", v)
			}
			s.mode = m
		case "fenced":
			s.fenced = true
		case "frozen":
			s.frozen = true
		case "crash":
			s.crash = true
		case "fatal":
			s.fatal = true
		case "queued":
			s.queued = n
		case "held":
			s.held = n
		case "running":
			s.running = n
		case "waiting":
			s.waiting = n
		default:
			return s, fmt.Errorf("step: unknown argument %q", a.Key)
		}
	}
	return s, nil
}

// stepLine prints a step: what it does first, then how the turn ends.
func (r *engineRig) stepLine(st step) string {
	var parts []string
	if st.freeze {
		parts = append(parts, "freeze")
	}
	if st.giveUp {
		parts = append(parts, "give up the retries")
	}
	if st.take > 0 {
		parts = append(parts, fmt.Sprintf("take %d", st.take))
	}
	if st.start {
		parts = append(parts, "start")
	}
	then := "then " + st.then.String()
	if st.then == thenBound {
		then += fmt.Sprintf(" at %v", st.at.Sub(r.t0))
	}
	return strings.Join(append(parts, then), ", ") + "\n"
}
