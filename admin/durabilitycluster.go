package admin

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// weakest merges the settings of a cluster's primaries into what a wait on
// all of them can ask: WAITAOF only when every primary answers it, a local
// fsync only when none has appendfsync no. One server's settings are kept
// as they are.
func weakest(all []NodeSettings) NodeSettings {
	w := all[0]
	for _, s := range all[1:] {
		if s.WaitAOF != WaitAOFOn {
			w.WaitAOF, w.ProbeErr = s.WaitAOF, s.ProbeErr
		}
		if s.Config == nil {
			continue
		}
		if w.Config == nil || s.Config["appendfsync"] == "no" {
			w.Config = s.Config
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
