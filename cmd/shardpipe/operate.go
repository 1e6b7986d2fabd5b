package main

import (
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/settings"
	"github.com/shardpipe/shardpipe/opshttp"
)

// listenOps binds --metrics-addr (opshttp.Listen) before anything
// connects: a taken address is a problem the flag fixes (exit 2).
func listenOps(addr string, rdb redis.UniversalClient) (*opshttp.Ops, error) {
	ops, err := opshttp.Listen(addr, rdb)
	if err != nil {
		return nil, usageErr(fmt.Sprintf("%s %v; choose a free address or leave it empty", flagRef(settings.FlagMetricsAddr), err))
	}
	return ops, nil
}

// startingDetail is what run's starting readiness check says it waits for.
func startingDetail(rc *runConfig) string {
	servers := "Kafka and Redis"
	if rc.sqlEffect {
		servers = "Kafka, Redis and PostgreSQL"
	}
	return fmt.Sprintf("starting: checking %s (up to --connect-timeout %v each)", servers, rc.connectTimeout)
}
