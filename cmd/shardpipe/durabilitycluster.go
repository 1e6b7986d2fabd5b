package main

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/pipeline"
)

// effectBarrier is the barrier for run's effect. Guard mode (--effect
// http) gets it without its loss count: after a failover the pipeline
// would apply the records since the last commit again, and with effects
// outside Redis that runs again those whose done claims were lost
// (pipeline.LossReporter). The per-topic key space wraps the guarded
// appliers, so the pipeline cannot see that itself.
func effectBarrier(external bool, b pipeline.Barrier) pipeline.Barrier {
	if external {
		return barrierOnly{b}
	}
	return b
}

// barrierOnly hides every method of a Barrier but Wait.
type barrierOnly struct{ b pipeline.Barrier }

func (o barrierOnly) Wait(ctx context.Context) error { return o.b.Wait(ctx) }

// weakest merges the settings of a cluster's primaries into what a wait on
// all of them can ask: WAITAOF only when every primary answers it, a local
// fsync only when none has appendfsync no. One server's settings are kept
// as they are.
func weakest(all []settings) settings {
	w := all[0]
	for _, s := range all[1:] {
		if s.waitAOF != waitAOFOn {
			w.waitAOF, w.probeErr = s.waitAOF, s.probeErr
		}
		if s.config == nil {
			continue
		}
		if w.config == nil {
			w.config = s.config
			continue
		}
		if s.config["appendfsync"] == "no" {
			w.config = s.config
		}
	}
	return w
}

// readTimeout is the client's read timeout, single or cluster.
func readTimeout(rdb redis.UniversalClient) time.Duration {
	switch c := rdb.(type) {
	case *redis.Client:
		return c.Options().ReadTimeout
	case *redis.ClusterClient:
		return c.Options().ReadTimeout
	}
	return 0
}

// fewestReplicas is the replicas connected to the server, or on a cluster
// to the primary that has the fewest.
func fewestReplicas(ctx context.Context, rdb redis.UniversalClient) (int, error) {
	switch c := rdb.(type) {
	case *redis.Client:
		return connectedReplicas(ctx, c)
	case *redis.ClusterClient:
		var mu sync.Mutex
		fewest := -1
		err := c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
			k, err := connectedReplicas(ctx, n)
			mu.Lock()
			defer mu.Unlock()
			if err == nil && (fewest < 0 || k < fewest) {
				fewest = k
			}
			return err
		})
		return fewest, err
	}
	return 0, nil
}
