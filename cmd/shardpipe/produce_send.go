package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/internal/orders"
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

// ensureTopic checks the topic exists, creating it when --partitions is set.
func ensureTopic(ctx context.Context, pc produceConfig, stderr io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, pc.connect)
	defer cancel()
	found, missing, err := topicPartitions(ctx, pc.brokers, []string{pc.topic})
	if err != nil {
		return unavailableErr(brokerProblem(pc.brokers, pc.connect, err))
	}
	if len(missing) == 0 {
		if pc.partitions > 0 && int32(found[pc.topic]) != pc.partitions {
			fmt.Fprintf(stderr, "produce: topic %s exists with %d partitions (not changed to %d)\n", pc.topic, found[pc.topic], pc.partitions)
		}
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
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, pc.partitions, pc.replication, nil, pc.topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return failure(fmt.Errorf("create topic %s with %d partitions: %w", pc.topic, pc.partitions, err))
	}
	fmt.Fprintf(stderr, "produce: created topic %s with %d partitions\n", pc.topic, pc.partitions)
	return nil
}

// produce sends every record of next, paced to pc.rate, and returns what
// was acknowledged. It stops at the first failed record.
func produce(ctx context.Context, pc produceConfig, next func() (orders.Line, error), total int64, stderr io.Writer) (orders.Summary, error) {
	var sum orders.Summary
	cl, err := kgo.NewClient(kgo.SeedBrokers(pc.brokers...), kgo.DefaultProduceTopic(pc.topic))
	if err != nil {
		return sum, failure(fmt.Errorf("kafka client: %w", err))
	}
	defer cl.Close()
	prog := newProgress(stderr, total, time.Second)
	var (
		mu      sync.Mutex
		sendErr error
	)
	start := time.Now()
	var timer *time.Timer
	for i := 0; ; i++ {
		l, err := next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			sendErr = usageErr(err.Error())
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
		cl.Produce(ctx, &kgo.Record{Key: []byte(l.Key), Value: l.Value}, func(r *kgo.Record, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if sendErr == nil {
					sendErr = failure(fmt.Errorf("produce order %s: %w", l.Key, err))
				}
				return
			}
			sum.Add(l, r.Partition)
			prog.add()
		})
	}
	flushCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.Flush(flushCtx); err != nil && sendErr == nil {
		sendErr = failure(fmt.Errorf("flush: %w", err))
	}
	prog.close(flushCtx)
	mu.Lock()
	defer mu.Unlock()
	if sendErr == nil && ctx.Err() != nil {
		sendErr = failure(fmt.Errorf("interrupted after %d acknowledged records", sum.Records))
	}
	return sum, sendErr
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
