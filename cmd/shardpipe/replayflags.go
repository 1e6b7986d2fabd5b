package main

import (
	"time"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/settings"
	"github.com/shardpipe/shardpipe/pipeline"
)

// fPartitionIDs is the partitions of replay and reset-offsets, which
// their messages name.
const fPartitionIDs = settings.FlagPartitionIDs

// replayConfig is replay's validated configuration: settings.Replay, with
// its fields copied out once loaded.
type replayConfig struct {
	kafkaConn
	topic      string
	r          settings.Replay
	id         string
	from, to   pipeline.Bound
	partitions []int32
	sinkConfig
	effectConfig     // --effect http's and sql's settings, --max-in-flight
	dryRun, force    bool
	rate             float64
	checkpointPrefix string
	given            string // the range flags as given, stored with the plan by the first run of the id
	now              time.Time
	metricsAddr      string // "": no metrics
}

func (rc *replayConfig) Groups() []cliflags.Group {
	rc.r.Now = time.Now()
	gs := []cliflags.Group{kafkaGroup(&rc.kafkaConn), topicGroup(&rc.topic, "topic to replay"),
		cliflags.Then(settings.ReplayRangeGroup(&rc.r), func() { rc.id, rc.from, rc.to, rc.now = rc.r.ID, rc.r.From, rc.r.To, rc.r.Now }),
		cliflags.Then(settings.PartitionsGroup(&rc.r.Partitions, "partitions to replay, comma-separated (default: all)"), func() { rc.partitions = rc.r.Partitions }),
	}
	gs = append(gs, rc.groups(func() []string { return []string{rc.topic} })...)
	gs = append(gs, rc.effectGroups(&rc.ledgerConfig)...)
	gs = append(gs, cliflags.Then(settings.ReplayRunGroup(&rc.r), func() {
		rc.given, rc.dryRun, rc.force, rc.rate, rc.checkpointPrefix = rc.r.Given, rc.r.DryRun, rc.r.Force, rc.r.Rate, rc.r.CheckpointPrefix
	}), settings.MetricsGroup(&rc.metricsAddr, "serve Prometheus metrics (the same series as run's, per partition of the replay) at http://ADDR/metrics, e.g. :9465 (empty: off)"))
	return append(gs, rc.tail("when stderr is not a terminal: how often to log a progress line",
		func() []settings.OwnedKey { return rc.r.Keys() })...)
}
