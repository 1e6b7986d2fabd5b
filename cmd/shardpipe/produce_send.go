package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/shardpipe/shardpipe/admin"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/produce"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/termui"
	"github.com/shardpipe/shardpipe/internal/orders"
)

// ensureTopic checks the topic exists; with --partitions it creates it
// and its dead-letter topic when missing (admin.EnsureTopic).
func ensureTopic(ctx context.Context, pc *produceConfig, stderr io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, pc.connect)
	defer cancel()
	var e admin.Ensured
	err := pc.withAdmin(func(adm *kadm.Client) (err error) {
		e, err = admin.EnsureTopic(ctx, adm, pc.topic, pc.Partitions, pc.Replication)
		return err
	})
	if ce := (*admin.CheckError)(nil); errors.Is(err, admin.ErrTopicMissing) && errors.As(err, &ce) {
		return unavailableErr(fmt.Sprintf("kafka: topic %q does not exist%s; pass %s N to create it", pc.topic, ce.DidYouMean(), flagRef(fPartitions)))
	} else if err != nil {
		return exitFor(err, pc.kafkaConn, pc.connect)
	}
	if e.Existing > 0 && pc.Partitions > 0 && int32(e.Existing) != pc.Partitions {
		fmt.Fprintf(stderr, "produce: topic %s exists with %d partitions (not changed to %d)\n", pc.topic, e.Existing, pc.Partitions)
	}
	for _, name := range e.Created {
		fmt.Fprintf(stderr, "produce: created topic %s with %d partitions\n", name, pc.Partitions)
	}
	return nil
}

// sendAll sends every record of next (produce.Send), paced to pc.Rate,
// with a progress display, and returns what was acknowledged. A bad input
// line is a usage error when nothing was sent before it, a failure saying
// how much was sent otherwise. When ctx ends it stops sending, calls
// interrupted (so that a second signal kills at once) and waits for the
// records in flight.
func sendAll(ctx context.Context, pc *produceConfig, next produce.Next, total int64, stderr io.Writer,
	interrupted func()) (orders.Summary, error) {
	prog := termui.NewProgress(stderr, total, time.Second)
	res, err := produce.Send(ctx, produce.Config{Brokers: pc.brokers, KafkaOpts: pc.opts, Topic: pc.topic, Rate: pc.Rate, Delivery: pc.Delivery,
		OnAck: prog.Add, OnInterrupt: func() {
			interrupted()
			prog.Printf("produce: interrupted: no more records are sent; waiting up to %v for those in flight; interrupt again to quit at once\n",
				pc.Delivery)
		}}, next)
	prog.Close(context.Background())
	if err != nil {
		return res.Summary, failure(err)
	}
	lines, usage := res.Problems(fmt.Sprintf("%s %v", flagRef(fDelivery), pc.Delivery), ctx.Err() != nil)
	switch {
	case usage:
		return res.Summary, usageErr(lines...)
	case len(lines) > 0:
		return res.Summary, &exitError{code: exitFailure, lines: lines}
	}
	return res.Summary, nil
}
