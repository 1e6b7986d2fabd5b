package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/internal/orders"
	"github.com/shardpipe/shardpipe/internal/topics"
	"github.com/shardpipe/shardpipe/pipeline"
)

// source returns the record source: the generator or JSON lines.
func (pc produceConfig) source(stdin io.Reader) (next func() (orders.Line, error), total int64, closeFn func(), err error) {
	if pc.from == "" {
		g := orders.NewGenerator(pc.gen)
		return func() (orders.Line, error) {
			l, _, ok := g.Next()
			if !ok {
				return l, io.EOF
			}
			return l, nil
		}, int64(g.Total()), func() {}, nil
	}
	r, closeFn := stdin, func() {}
	if pc.from != "-" {
		f, err := os.Open(pc.from)
		if err != nil {
			return nil, 0, nil, fmt.Errorf("%s: %w", flagRef(fFrom), err)
		}
		r, closeFn = f, func() { _ = f.Close() }
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	line := 0
	return func() (orders.Line, error) {
		for sc.Scan() {
			line++
			if len(sc.Bytes()) == 0 {
				continue
			}
			l, err := orders.ParseLine(sc.Bytes())
			if err != nil {
				return l, fmt.Errorf("%s line %d: %w", pc.from, line, err)
			}
			return l, nil
		}
		if err := sc.Err(); err != nil {
			return orders.Line{}, fmt.Errorf("%s: %w", pc.from, err)
		}
		return orders.Line{}, io.EOF
	}, -1, closeFn, nil
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
	found, missing, err := topicPartitions(ctx, pc.brokers, names)
	if err != nil {
		return unavailableErr(brokerProblem(pc.brokers, pc.connect, err))
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
	cl, err := adminClient(pc.brokers)
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

// produce sends every record of next, paced to pc.rate, and returns what
// was acknowledged. It stops at the first failed record, and at the first
// bad input line: a usage error when nothing was sent before it, a failure
// saying how much was sent otherwise. A record not acknowledged within
// pc.delivery fails. When ctx ends it stops sending, calls interrupted (so
// that a second signal kills at once) and waits for the records in flight.
func produce(ctx context.Context, pc produceConfig, next func() (orders.Line, error), total int64, stderr io.Writer,
	interrupted func()) (orders.Summary, error) {
	var sum orders.Summary
	// The delivery timeout also fails records in flight to a broker that
	// went away: their fate is unknown, so a failed run may have written
	// some of them. produce never re-sends a failed record itself.
	//
	// AlwaysRetryEOF: a broker shutting down (a rolling restart) accepts
	// connections and closes them during the handshake; franz-go would take
	// that for a TLS or SASL mismatch and fail every buffered record at
	// once. ensureTopic has just talked to these brokers, so the
	// configuration is known good: retry until the delivery timeout.
	cl, err := kgo.NewClient(kgo.SeedBrokers(pc.brokers...), kgo.DefaultProduceTopic(pc.topic),
		kgo.RecordDeliveryTimeout(pc.delivery), kgo.AllowIdempotentProduceCancellation(), kgo.AlwaysRetryEOF())
	if err != nil {
		return sum, failure(fmt.Errorf("kafka client: %w", err))
	}
	defer cl.Close()
	prog := newProgress(stderr, total, time.Second)
	var (
		mu      sync.Mutex
		sendErr error // the first failed record; under mu
		lineErr error // a bad input line; only this goroutine
		sent    int   // records handed to the client
		dropped int   // records cancelled by an interrupt; under mu
	)
	start := time.Now()
	var timer *time.Timer
	for i := 0; ; i++ {
		l, err := next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			lineErr = err
			break
		}
		if pc.rate > 0 {
			if err := pace(ctx, &timer, start.Add(time.Duration(i)*time.Second/time.Duration(pc.rate))); err != nil {
				break
			}
		}
		mu.Lock()
		failed := sendErr != nil
		mu.Unlock()
		if failed || ctx.Err() != nil {
			break
		}
		sent++
		cl.Produce(ctx, &kgo.Record{Key: []byte(l.Key), Value: l.Value}, func(r *kgo.Record, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				switch {
				case errors.Is(err, context.Canceled) && ctx.Err() != nil:
					dropped++ // interrupted: not a failure of its own
				case sendErr != nil:
				case errors.Is(err, kgo.ErrRecordTimeout):
					sendErr = fmt.Errorf("produce order %s: not acknowledged within %s %v (brokers down or unreachable?): %w",
						l.Key, flagRef(fDelivery), pc.delivery, err)
				default:
					sendErr = fmt.Errorf("produce order %s: %w", l.Key, err)
				}
				return
			}
			sum.Add(l, r.Partition)
			prog.add()
		})
	}
	if ctx.Err() != nil {
		interrupted()
		prog.printf("produce: interrupted: no more records are sent; waiting up to %v for those in flight; interrupt again to quit at once\n",
			pc.delivery)
	}
	// Records fail after pc.delivery at the latest; the margin covers a
	// batch in flight when that expires.
	flushCtx, cancel := context.WithTimeout(context.Background(), pc.delivery+10*time.Second)
	defer cancel()
	flushErr := cl.Flush(flushCtx)
	prog.close(flushCtx)
	mu.Lock()
	defer mu.Unlock()
	if sendErr == nil && flushErr != nil {
		sendErr = fmt.Errorf("flush: %w", flushErr)
	}
	switch {
	case lineErr != nil && sent == 0 && sendErr == nil:
		return sum, usageErr(lineErr.Error())
	case lineErr != nil:
		lines := []string{fmt.Sprintf("%v; stopped at this line after sending %d records (%d acknowledged)", lineErr, sent, sum.Records)}
		if sendErr != nil {
			lines = append(lines, sendErr.Error())
		}
		return sum, &exitError{code: exitFailure, lines: lines}
	case sendErr != nil:
		return sum, failure(sendErr)
	case ctx.Err() != nil:
		return sum, failure(fmt.Errorf("interrupted after %d acknowledged records (%d more cancelled, unsent or unconfirmed)", sum.Records, dropped))
	}
	return sum, nil
}

// pace waits until at, or until ctx ends.
func pace(ctx context.Context, timer **time.Timer, at time.Time) error {
	d := time.Until(at)
	if d <= 0 {
		return nil
	}
	if *timer == nil {
		*timer = time.NewTimer(d)
	} else {
		(*timer).Reset(d)
	}
	select {
	case <-(*timer).C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
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
