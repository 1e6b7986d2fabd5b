package bench

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/sink"
)

// runScripted is the scripted sink ceiling: the script a Ledger with the
// totals effect sends (sink.ClaimScriptFor), one EVALSHA per key with the
// keys and arguments the Ledger passes ([ledger key, hash], [claim, TTL ms,
// customer, amount]) for the same keys, customers and amounts the topic
// holds, pipelined as runSink pipelines SET NX, no Kafka.
func runScripted(ctx context.Context, spec Spec) (Result, error) {
	rdb, err := NewRedis(spec.Redis)
	if err != nil {
		return Result{}, err
	}
	defer rdb.Close()
	tot := totals(spec.Prefix)
	script := sink.ClaimScriptFor(tot)
	if err := script.Load(ctx, rdb).Err(); err != nil {
		return Result{}, fmt.Errorf("load the claim script: %w", err)
	}
	return inStreams(spec, func(s int) (int64, error) { return scriptStream(ctx, rdb, script, tot.Hash, spec, s) })
}

// scriptStream runs the script for keys s, s+streams, s+2*streams, ... in
// pipelined batches and counts the keys it claimed (the script's reply 1).
func scriptStream(ctx context.Context, rdb *redis.Client, script *redis.Script, hash string, spec Spec, s int) (int64, error) {
	var claimed int64
	ttlms := spec.TTL.Milliseconds()
	cmds := make([]*redis.Cmd, 0, ceilingBatch)
	p := rdb.Pipeline()
	flush := func() error {
		if _, err := p.Exec(ctx); err != nil {
			return fmt.Errorf("pipelined EVALSHA of the claim script: %w", err)
		}
		for _, c := range cmds {
			if n, ok := c.Val().(int64); ok && n == 1 {
				claimed++
			}
		}
		cmds = cmds[:0]
		return nil
	}
	for i := s; i < spec.Records; i += ceilingStreams {
		cmds = append(cmds, script.EvalSha(ctx, p, []string{spec.Prefix + Key(i), hash},
			claimSized, ttlms, customer(i), amount(i)))
		if len(cmds) == ceilingBatch {
			if err := flush(); err != nil {
				return claimed, err
			}
		}
	}
	if len(cmds) > 0 {
		return claimed, flush()
	}
	return claimed, nil
}
