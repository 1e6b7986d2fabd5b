package main

import (
	"fmt"
	"net"

	"github.com/shardpipe/shardpipe/internal/settings"
)

// listenMetrics binds --metrics-addr (nil for "") before anything
// connects: a taken address is a start-up problem the flag fixes (exit 2
// naming it).
func listenMetrics(addr string) (net.Listener, error) {
	if addr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, usageErr(fmt.Sprintf("%s %s: cannot listen there (%v); choose a free address or leave it empty",
			flagRef(settings.FlagMetricsAddr), addr, err))
	}
	return ln, nil
}

// healthKey is the Redis key readiness writes (settings.HealthKey).
func healthKey(dlqPrefix string) string { return settings.HealthKey(dlqPrefix) }
