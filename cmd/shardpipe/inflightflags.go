package main

import (
	"github.com/shardpipe/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/internal/settings"
	"github.com/shardpipe/shardpipe/pipeline"
)

// inflightConfig is run's concurrency and effect-retry settings.
type inflightConfig struct{ s settings.InFlight }

func inflightGroup(ic *inflightConfig) cliflags.Group { return settings.InFlightGroup(&ic.s) }

func (ic inflightConfig) options() []pipeline.Opt { return ic.s.Options() }
