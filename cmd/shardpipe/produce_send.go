package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/admin"
	"github.com/shardpipe/shardpipe/internal/orders"
	"github.com/shardpipe/shardpipe/internal/produce"
	"github.com/shardpipe/shardpipe/internal/termui"
	"github.com/shardpipe/shardpipe/internal/topics"
	"github.com/shardpipe/shardpipe/pipeline"
)

// source returns the record source: the generator or JSON lines.
func (pc produceConfig) source(stdin io.Reader) (next produce.Next, total int64, closeFn func(), err error) {
	if pc.from == "" {
		next, total := produce.Generated(pc.gen)
		return next, total, func() {}, nil
	}
	r, closeFn := stdin, func() {}
	if pc.from != "-" {
		f, err := os.Open(pc.from)
		if err != nil {
			return nil, 0, nil, fmt.Errorf("%s: %w", flagRef(fFrom), err)
		}
		r, closeFn = f, func() { _ = f.Close() }
	}
	return produce.Lines(r, pc.from), -1, closeFn, nil
}

// ensureTopic checks the topic exists. With --partitions it creates it when
// missing, and also its dead-letter topic <topic>.dlq (what run's default
// --on-poison dlq writes to) with as many partitions, when that is missing.
func ensureTopic(ctx context.Context, pc produceConfig, stderr io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, pc.connect)
	defer cancel()
	names := []string{pc.topic}
	if pc.partitions > 0 && !strings.HasSuffix(pc.topic, ".dlq") {
		names = append(names, pipeline.DeadLetterTopic("", pc.topic))
	}
	var found map[string]int
	var missing []string
	err := withAdmin(pc.brokers, pc.kafkaOpts, func(adm *kadm.Client) (err error) {
		found, missing, err = admin.TopicPartitions(ctx, adm, names...)
		return err
	})
	if err != nil {
		return exitFor(err, pc.brokers, pc.connect)
	}
	if n, ok := found[pc.topic]; ok && pc.partitions > 0 && int32(n) != pc.partitions {
		fmt.Fprintf(stderr, "produce: topic %s exists with %d partitions (not changed to %d)\n", pc.topic, n, pc.partitions)
	}
	if len(missing) == 0 {
		return nil
	}
	if pc.partitions == 0 {
		return unavailableErr(fmt.Sprintf("kafka: topic %q does not exist; pass %s N to create it", pc.topic, flagRef(fPartitions)))
	}
	cl, err := adminClient(pc.brokers, pc.kafkaOpts...)
	if err != nil {
		return failure(err)
	}
	defer cl.Close()
	for _, name := range missing {
		// ExistOK: created meanwhile, by another producer.
		created, err := topics.Create(ctx, kadm.NewClient(cl), topics.Spec{Name: name, Partitions: pc.partitions,
			Replication: pc.replication, ExistOK: true})
		if err != nil {
			return failure(err)
		}
		if created {
			fmt.Fprintf(stderr, "produce: created topic %s with %d partitions\n", name, pc.partitions)
		}
	}
	return nil
}

// sendAll sends every record of next (produce.Send), paced to pc.rate,
// with a progress display, and returns what was acknowledged. A bad input
// line is a usage error when nothing was sent before it, a failure saying
// how much was sent otherwise. When ctx ends it stops sending, calls
// interrupted (so that a second signal kills at once) and waits for the
// records in flight.
func sendAll(ctx context.Context, pc produceConfig, next produce.Next, total int64, stderr io.Writer,
	interrupted func()) (orders.Summary, error) {
	prog := termui.NewProgress(stderr, total, time.Second)
	res, err := produce.Send(ctx, produce.Config{Brokers: pc.brokers, KafkaOpts: pc.kafkaOpts, Topic: pc.topic, Rate: pc.rate, Delivery: pc.delivery,
		OnAck: prog.Add, OnInterrupt: func() {
			interrupted()
			prog.Printf("produce: interrupted: no more records are sent; waiting up to %v for those in flight; interrupt again to quit at once\n",
				pc.delivery)
		}}, next)
	prog.Close(context.Background())
	if err != nil {
		return res.Summary, failure(err)
	}
	sendErr := res.SendErr
	var re *produce.RecordError
	if errors.As(sendErr, &re) && errors.Is(re.Err, kgo.ErrRecordTimeout) {
		sendErr = fmt.Errorf("produce order %s: not acknowledged within %s %v (brokers down or unreachable?): %w",
			re.Key, flagRef(fDelivery), pc.delivery, re.Err)
	}
	switch {
	case res.LineErr != nil && res.Sent == 0 && sendErr == nil:
		return res.Summary, usageErr(res.LineErr.Error())
	case res.LineErr != nil:
		lines := []string{fmt.Sprintf("%v; stopped at this line after sending %d records (%d acknowledged)", res.LineErr, res.Sent, res.Summary.Records)}
		if sendErr != nil {
			lines = append(lines, sendErr.Error())
		}
		return res.Summary, &exitError{code: exitFailure, lines: lines}
	case sendErr != nil:
		return res.Summary, failure(sendErr)
	case ctx.Err() != nil:
		return res.Summary, failure(fmt.Errorf("interrupted after %d acknowledged records (%d more cancelled, unsent or unconfirmed)", res.Summary.Records, res.Dropped))
	}
	return res.Summary, nil
}

// writeSummary writes sum as JSON to path ("-": stdout; "": nowhere).
func writeSummary(path string, stdout io.Writer, sum orders.Summary) error {
	if path == "" {
		return nil
	}
	b, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return failure(fmt.Errorf("summary: %w", err))
	}
	b = append(b, '\n')
	if path == "-" {
		_, err = stdout.Write(b)
	} else {
		err = os.WriteFile(path, b, 0o644)
	}
	if err != nil {
		return failure(fmt.Errorf("%s: %w", flagRef(fSummaryJSON), err))
	}
	return nil
}
