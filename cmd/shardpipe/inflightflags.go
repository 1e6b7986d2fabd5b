package main

import (
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/settings"
	"github.com/shardpipe/shardpipe/pipeline"
)

// inflightConfig is run's concurrency and effect-retry settings.
type inflightConfig struct{ s settings.InFlight }

func (ic inflightConfig) options() []pipeline.Opt { return ic.s.Options() }
