package main

import (
	"fmt"
	"log/slog"

	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/httpeffect"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// newHTTPGuarded is --effect http: guard mode (httpeffect.Effect) (a sink.Guard on the ledger's
// Redis, key space, TTL and key source) around an HTTP call per record; in
// a per-topic key space, one Guard per topic.
func newHTTPGuarded(lc ledgerConfig, hc httpConfig, topics []string, rdb redis.UniversalClient, log *slog.Logger) (pipeline.Applier, error) {
	log.Info("ledger key space", "key_space", lc.keySpace, "ledger_key", lc.prefixFor("<topic>")+"<business key>")
	hopts := []httpeffect.Opt{httpeffect.Timeout(hc.timeout)}
	if hc.rootCAs != nil {
		hopts = append(hopts, httpeffect.RootCAs(hc.rootCAs))
	}
	eff, err := httpeffect.New(hc.url.String(), hopts...)
	if err != nil {
		return nil, err
	}
	effect := eff.Do
	guarded := func(topic string) (pipeline.Applier, error) {
		g, err := sink.NewGuard(rdb, sink.WithPrefix(lc.prefixFor(topic)), sink.WithTTL(lc.ttl), sink.WithKeySource(lc.keys),
			sink.WithLease(guardLease), sink.WithLogger(log))
		if err != nil {
			return nil, fmt.Errorf("guard: %w", err)
		}
		return pipeline.Guarded(g, effect), nil
	}
	if lc.keySpace != keySpacePerTopic {
		return guarded("")
	}
	gs := make(map[string]pipeline.Applier, len(topics))
	for _, t := range topics {
		g, err := guarded(t)
		if err != nil {
			return nil, err
		}
		gs[t] = g
	}
	return pipeline.ByTopic(gs), nil
}
