package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/shardpipe/shardpipe/admin"
)

// warnDeadLetterPartitions logs one warning per source topic whose
// dead-letter topic has another partition count (admin.DeadLetterWarnings).
// Nothing when pc does not dead-letter.
func (pc poisonConfig) warnDeadLetterPartitions(ctx context.Context, k kafkaConn, sources []string, timeout time.Duration, log *slog.Logger) {
	if !pc.p.DeadLetter {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := k.withAdmin(func(adm *kadm.Client) error {
		admin.Log(ctx, log, admin.DeadLetterWarnings(ctx, adm, pc.p.Topic, sources))
		return nil
	})
	if err != nil {
		log.Debug("cannot read partition counts; dead-letter topics not compared", "err", err)
	}
}
