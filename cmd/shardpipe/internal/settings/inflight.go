package settings

import (
	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/flagcheck"
	"github.com/shardpipe/shardpipe/pipeline"
)

const (
	fMaxInFlight      = "max-in-flight"
	fMaxInFlightTotal = "max-in-flight-total"
	fEffectAttempts   = "effect-attempts"
	fOnEffectFailure  = "on-effect-failure"
)

// DefaultHTTPInFlight is --max-in-flight when --effect http is given and
// --max-in-flight is not: concurrent effects keep a partition moving while
// a receiver fails now and then (a failing key waits for its retry, the
// other keys go on), where batches wait for each failed record in turn.
const DefaultHTTPInFlight = 16

// InFlight is the settings of concurrent effects and their retries.
type InFlight struct {
	// PerPartition is how many effects run at once per partition, 0 to 4096
	// (0: batches one after another).
	PerPartition int
	// Given says whether --max-in-flight (or its variable) was set; when
	// not, --effect http takes DefaultHTTPInFlight (ForEffect).
	Given bool
	// Total is how many run at once in the whole process, at least 1.
	Total int
	// Attempts is how often a failing effect is tried, 1 to 100.
	Attempts int
	// StopOnFailure stops the pipeline on an effect that gave up instead
	// of dead-lettering its record.
	StopOnFailure bool
}

// InFlightGroup is run's and replay's flags of concurrent effects, loaded
// into ic.
func InFlightGroup(ic *InFlight) cliflags.Group {
	return cliflags.NewGroup(ic.load,
		&cli.IntFlag{Name: fMaxInFlight, Value: 0,
			Usage: "effects run at once per partition: records of one record key in offset order, different keys at once (0: batches one after another; not given: 16 with --effect http, else 0)"},
		&cli.IntFlag{Name: fMaxInFlightTotal, Value: 1024,
			Usage: "with --max-in-flight: effects run at once in the whole process"},
		&cli.IntFlag{Name: fEffectAttempts, Value: 5,
			Usage: "attempts of a record whose effect fails (backoff 100ms to 5s; with --max-in-flight its key's later records wait and other keys go on, in batches the batch waits) before --on-effect-failure"},
		&cli.StringFlag{Name: fOnEffectFailure, Value: "dlq",
			Usage: "a record whose effect gave up: dlq (as a poison record, needs --on-poison dlq) or stop (exit 1, offset stays before it)"})
}

func (ic *InFlight) load(c *cli.Command, bad *cliflags.Problems) {
	*ic = InFlight{PerPartition: IntIn(c, bad, fMaxInFlight, flagcheck.In(0, 4096, "0: off")), Given: c.IsSet(fMaxInFlight),
		Total: IntIn(c, bad, fMaxInFlightTotal, flagcheck.In(1, 65536, "")), Attempts: IntIn(c, bad, fEffectAttempts, flagcheck.In(1, 100, ""))}
	switch s := c.String(fOnEffectFailure); s {
	case "dlq":
	case "stop":
		ic.StopOnFailure = true
	default:
		bad.Addf("%s %q: want dlq or stop", ref(fOnEffectFailure), s)
	}
}

// ForEffect sets PerPartition to DefaultHTTPInFlight for an external
// effect (--effect http) when --max-in-flight was not given.
func (ic *InFlight) ForEffect(external bool) {
	if external && !ic.Given {
		ic.PerPartition = DefaultHTTPInFlight
	}
}

// Options returns the pipeline options of ic.
func (ic InFlight) Options() []pipeline.Opt {
	opts := []pipeline.Opt{pipeline.MaxInFlight(ic.PerPartition), pipeline.MaxInFlightTotal(ic.Total), pipeline.EffectAttempts(ic.Attempts)}
	if ic.StopOnFailure {
		opts = append(opts, pipeline.StopOnEffectFailure())
	}
	return opts
}
