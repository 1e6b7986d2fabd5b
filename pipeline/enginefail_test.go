package pipeline

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/shardpipe/shardpipe/sink"
)

// failureLimits are the limits of the failure scripts and of
// TestEngineFailureExhaustive, as config.validate builds them.
func failureLimits(poison, effect int) retryLimits {
	return retryLimits{
		retry:          sink.Backoff{Initial: 100 * time.Millisecond, Max: 5 * time.Second},
		poison:         sink.Backoff{Initial: 100 * time.Millisecond, Max: 2 * time.Second, Attempts: poison},
		effectAttempts: effect,
	}
}

// TestEngineFailureScripts runs testdata/failure/failure.txt: how the engine
// judges a failed attempt (onFailure), which both schedules ask.
//
//	limits poison=N effect=N           the attempts of a poison record and of a failing effect
//	attempt kind=K n=N [own=M] [stopping]
//	                                   the Nth failed attempt of a record, its Mth of kind K (default N)
func TestEngineFailureScripts(t *testing.T) {
	e := &engine{limits: failureLimits(3, 5)}
	datadriven.RunTest(t, "testdata/failure/failure.txt", func(t *testing.T, d *datadriven.TestData) string {
		args := map[string]string{}
		for _, a := range d.CmdArgs {
			args[a.Key] = ""
			if len(a.Vals) > 0 {
				args[a.Key] = a.Vals[0]
			}
		}
		num := func(k string) int {
			n, err := strconv.Atoi(args[k])
			if err != nil {
				d.Fatalf(t, "%s=%q: %v", k, args[k], err)
			}
			return n
		}
		switch d.Cmd {
		case "limits":
			e.limits = failureLimits(num("poison"), num("effect"))
			return "ok\n"
		case "attempt":
			kind := failure(-1)
			for k := failUnknown; k <= failMisconfigured; k++ {
				if k.String() == args["kind"] {
					kind = k
				}
			}
			if kind < 0 {
				d.Fatalf(t, "unknown kind %q", args["kind"])
			}
			_, stopping := args["stopping"]
			own := num("n")
			if _, ok := args["own"]; ok {
				own = num("own")
			}
			act, wait := e.onFailure(kind, num("n"), own, stopping)
			if act == actRetry {
				return fmt.Sprintf("retry in %v\n", wait)
			}
			return act.String() + "\n"
		}
		d.Fatalf(t, "unknown command %q", d.Cmd)
		return ""
	})
}

// TestEngineFailureExhaustive asks onFailure about every kind of failure,
// stopping or not, under small limits, and follows each record's attempts
// from the first until the engine stops retrying it, checking after every
// step: nothing is retried at a stop; a poison record or a failing effect
// is attempted exactly its limit's times when nothing stops it, and fails
// for good then; a refusal fails for good at once and a misconfiguration
// stops; an unknown outcome is never given up (only left, at a stop); a
// retry waits a positive time, no longer than the backoff's Max and no
// shorter than the retry before it.
func TestEngineFailureExhaustive(t *testing.T) {
	n := 0
	for poison := 1; poison <= 4; poison++ {
		for effect := 1; effect <= 4; effect++ {
			e := &engine{limits: failureLimits(poison, effect)}
			for kind := failUnknown; kind <= failMisconfigured; kind++ {
				for stopAt := 1; stopAt <= 7; stopAt++ { // the attempt from which the term stops; 7: never
					var last time.Duration
					for attempts := 1; ; attempts++ {
						n++
						stopping := stopAt < 7 && attempts >= stopAt
						act, wait := e.onFailure(kind, attempts, attempts, stopping)
						where := fmt.Sprintf("limits poison=%d effect=%d, %v attempt %d (stopping %v): %v %v", poison, effect, kind, attempts, stopping, act, wait)
						if msg := checkFailure(e.limits, kind, attempts, stopping, act, wait, last); msg != "" {
							t.Fatalf("%s: %s", where, msg)
						}
						if act != actRetry {
							break
						}
						if attempts == 20 {
							if kind == failUnknown {
								break // retried while the term lasts
							}
							t.Fatalf("%s: retried past 20 attempts", where)
						}
						last = wait
					}
				}
			}
		}
	}
	t.Logf("%d judgements checked", n)
}

// checkFailure returns what is wrong with onFailure's judgement (act,
// wait) of the attempts-th failed attempt of kind, the retry before it
// having waited last ("" when nothing is).
func checkFailure(l retryLimits, kind failure, attempts int, stopping bool, act retryAct, wait, last time.Duration) string {
	limit := map[failure]int{failPoison: l.poison.Attempts, failEffect: l.effectAttempts}[kind]
	switch {
	case act == actRetry && stopping:
		return "retries at a stop"
	case act == actRetry && (wait <= 0 || wait > max(l.retry.Max, l.poison.Max) || wait < last):
		return fmt.Sprintf("waits %v after %v: not positive, past the backoff's Max or shorter than before", wait, last)
	case kind == failMisconfigured && act != actStop, kind != failMisconfigured && act == actStop:
		return "stops on what is not a misconfiguration, or not on one"
	case kind == failRefused && act != actForGood:
		return "a refusal does not fail for good at once"
	case kind == failUnknown && act == actForGood:
		return "gives up an unknown outcome"
	case kind == failUnknown && stopping != (act == actLeave):
		return "an unknown outcome is left other than at a stop"
	case limit > 0 && !stopping && (attempts < limit) != (act == actRetry):
		return fmt.Sprintf("with no stop, retries after %d attempts of %d allowed, or does not", attempts, limit)
	case limit > 0 && attempts >= limit && act != actForGood:
		return "does not fail for good at its limit"
	case kind == failPoison && stopping && act != actForGood:
		return "a poison record at a stop does not fail for good at once"
	case kind == failEffect && stopping && attempts < limit && act != actLeave:
		return "an effect with attempts left is not left at a stop"
	}
	return ""
}

// TestEngineFailureCounts follows every sequence of up to 8 failed
// attempts of one record, each of unknown outcome or a failing effect, as
// failCounts counts them and onFailure judges them, with EffectAttempts 1
// to 4: the record is given up exactly at the attempt whose effect failure
// is its EffectAttempts-th, however many failures of unknown outcome came
// between (they do not count), and never at one of unknown outcome; the
// backoff grows with every failed attempt, of either kind.
func TestEngineFailureCounts(t *testing.T) {
	n := 0
	for limit := 1; limit <= 4; limit++ {
		e := &engine{limits: failureLimits(3, limit)}
		for length := 1; length <= 8; length++ {
			for bits := 0; bits < 1<<length; bits++ {
				var c failCounts
				effects := 0
				var last time.Duration
				for i := range length {
					kind := failUnknown
					if bits&(1<<i) != 0 {
						kind, effects = failEffect, effects+1
					}
					attempts, own := c.note(kind)
					act, wait := e.onFailure(kind, attempts, own, false)
					n++
					where := fmt.Sprintf("EffectAttempts %d, failures %0*b, attempt %d (%v)", limit, length, bits, i+1, kind)
					switch {
					case attempts != i+1:
						t.Fatalf("%s: counted %d attempts", where, attempts)
					case kind == failEffect && (effects == limit) != (act == actForGood):
						t.Fatalf("%s: %v after %d effect failures of %d allowed", where, act, effects, limit)
					case kind == failUnknown && act != actRetry:
						t.Fatalf("%s: %v, want a retry", where, act)
					case act == actRetry && wait < last:
						t.Fatalf("%s: waits %v after %v", where, wait, last)
					}
					if act != actRetry {
						break
					}
					last = wait
				}
			}
		}
	}
	t.Logf("%d judgements checked", n)
}
