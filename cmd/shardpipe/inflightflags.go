package main

import (
	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/pipeline"
)

// Flag names of concurrent effects (run only).
const (
	fMaxInFlight      = "max-in-flight"
	fMaxInFlightTotal = "max-in-flight-total"
	fEffectAttempts   = "effect-attempts"
	fOnEffectFailure  = "on-effect-failure"
)

// inflightConfig is the validated concurrency and effect-retry settings.
type inflightConfig struct {
	maxInFlight, maxInFlightTotal, effectAttempts int
	stopOnFailure                                 bool
}

// inflightGroup is run's flags of concurrent effects.
func inflightGroup(ic *inflightConfig) cliflags.Group {
	return cliflags.NewGroup(ic.load,
		&cli.IntFlag{Name: fMaxInFlight, Value: 0,
			Usage: "effects run at once per partition: records of one record key in offset order, different keys at once (0: batches one after another)"},
		&cli.IntFlag{Name: fMaxInFlightTotal, Value: 1024,
			Usage: "with --max-in-flight: effects run at once in the whole process"},
		&cli.IntFlag{Name: fEffectAttempts, Value: 5,
			Usage: "with --max-in-flight: attempts of a record whose effect fails (backoff 100ms to 5s, its key's later records waiting, other keys going on) before --on-effect-failure"},
		&cli.StringFlag{Name: fOnEffectFailure, Value: "dlq",
			Usage: "with --max-in-flight: a record whose effect gave up: dlq (as a poison record, needs --on-poison dlq) or stop (exit 1, offset stays before it)"})
}

// load reads the flags of concurrent effects.
func (ic *inflightConfig) load(c *cli.Command, bad *cliflags.Problems) {
	*ic = inflightConfig{maxInFlight: int(c.Int(fMaxInFlight)), maxInFlightTotal: int(c.Int(fMaxInFlightTotal)),
		effectAttempts: int(c.Int(fEffectAttempts))}
	if ic.maxInFlight < 0 || ic.maxInFlight > 4096 {
		bad.Addf("%s %d: want 0 to 4096", flagRef(fMaxInFlight), ic.maxInFlight)
	}
	if ic.maxInFlightTotal < 1 {
		bad.Addf("%s %d: want at least 1", flagRef(fMaxInFlightTotal), ic.maxInFlightTotal)
	}
	if ic.effectAttempts < 1 || ic.effectAttempts > 100 {
		bad.Addf("%s %d: want 1 to 100", flagRef(fEffectAttempts), ic.effectAttempts)
	}
	switch s := c.String(fOnEffectFailure); s {
	case "dlq":
	case "stop":
		ic.stopOnFailure = true
	default:
		bad.Addf("%s %q: want dlq or stop", flagRef(fOnEffectFailure), s)
	}
}

// options returns the pipeline options of ic.
func (ic inflightConfig) options() []pipeline.Opt {
	opts := []pipeline.Opt{pipeline.MaxInFlight(ic.maxInFlight), pipeline.MaxInFlightTotal(ic.maxInFlightTotal),
		pipeline.EffectAttempts(ic.effectAttempts)}
	if ic.stopOnFailure {
		opts = append(opts, pipeline.StopOnEffectFailure())
	}
	return opts
}
