// Package produce is the sending loop of `shardpipe produce`: orders from
// a source (the generator or JSON lines), paced, each acknowledged by the
// brokers or failed, and interruptible without losing count of what was
// acknowledged. The command keeps its flags, progress display and exit
// codes.
package produce

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/internal/orders"
)

// Next returns the next order, io.EOF after the last, or an error for a bad
// input line (the line is not sent).
type Next func() (orders.Line, error)

// Generated returns the generator's orders and how many there are.
func Generated(cfg orders.GenConfig) (Next, int64) {
	g := orders.NewGenerator(cfg)
	return func() (orders.Line, error) {
		l, _, ok := g.Next()
		if !ok {
			return l, io.EOF
		}
		return l, nil
	}, int64(g.Total())
}

// Lines returns the orders of r, one JSON object per line; blank lines are
// skipped, a line longer than 16 MiB or not an order is an error naming
// name and the line number.
func Lines(r io.Reader, name string) Next {
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
				return l, fmt.Errorf("%s line %d: %w", name, line, err)
			}
			return l, nil
		}
		if err := sc.Err(); err != nil {
			return orders.Line{}, fmt.Errorf("%s: %w", name, err)
		}
		return orders.Line{}, io.EOF
	}
}

// Config says where and how fast to send.
type Config struct {
	// Brokers are the seed brokers.
	Brokers []string
	// KafkaOpts are more options of the client: TLS, SASL.
	KafkaOpts []kgo.Opt
	// Topic is the topic to write to; it must exist.
	Topic string
	// Rate is records per second; 0: as fast as the client takes them.
	Rate int
	// Delivery is how long a record may wait for its acknowledgement
	// before it fails (kgo.RecordDeliveryTimeout).
	Delivery time.Duration
	// OnAck is called once per acknowledged record, from the client's
	// goroutines; nil: not called.
	OnAck func()
	// OnInterrupt is called once when ctx ends, before waiting for the
	// records in flight; nil: not called.
	OnInterrupt func()
}

// RecordError is a record the brokers did not acknowledge.
type RecordError struct {
	// Key is the order's key.
	Key string
	// Err is the client's error; kgo.ErrRecordTimeout when Delivery passed.
	Err error
}

// Error names the order and the cause.
func (e *RecordError) Error() string { return fmt.Sprintf("produce order %s: %v", e.Key, e.Err) }

// Unwrap returns the client's error.
func (e *RecordError) Unwrap() error { return e.Err }

// Result is what Send did.
type Result struct {
	// Summary counts the acknowledged records.
	Summary orders.Summary
	// Sent is how many records were handed to the client.
	Sent int
	// Dropped is how many an interrupt cancelled before their
	// acknowledgement.
	Dropped int
	// LineErr is the bad input line Send stopped at, if any.
	LineErr error
	// SendErr is the first record that failed (a *RecordError), or the
	// final flush's error.
	SendErr error
	// Interrupted says ctx ended before the source did.
	Interrupted bool
}

// Send sends every order of next to cfg.Topic, paced to cfg.Rate, and
// returns what was acknowledged. It stops at the first failed record and at
// the first bad input line (both in Result). When ctx ends it stops
// sending, calls cfg.OnInterrupt and waits up to cfg.Delivery (plus 10s)
// for the records in flight. A failed record may still have been written
// (its fate is unknown); Send never re-sends. The error is for a client
// that cannot be made.
func Send(ctx context.Context, cfg Config, next Next) (Result, error) {
	var res Result
	// AlwaysRetryEOF: a broker shutting down (a rolling restart) accepts
	// connections and closes them during the handshake; franz-go would take
	// that for a TLS or SASL mismatch and fail every buffered record at
	// once. The caller has just talked to these brokers, so the
	// configuration is known good: retry until the delivery timeout.
	cl, err := kgo.NewClient(append(cfg.KafkaOpts, kgo.SeedBrokers(cfg.Brokers...), kgo.DefaultProduceTopic(cfg.Topic),
		kgo.RecordDeliveryTimeout(cfg.Delivery), kgo.AllowIdempotentProduceCancellation(), kgo.AlwaysRetryEOF())...)
	if err != nil {
		return res, fmt.Errorf("kafka client: %w", err)
	}
	defer cl.Close()
	var mu sync.Mutex // guards res.Summary, res.SendErr, res.Dropped
	start := time.Now()
	var timer *time.Timer
	for i := 0; ; i++ {
		l, err := next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			res.LineErr = err
			break
		}
		if cfg.Rate > 0 {
			if err := pace(ctx, &timer, start.Add(time.Duration(i)*time.Second/time.Duration(cfg.Rate))); err != nil {
				break
			}
		}
		mu.Lock()
		failed := res.SendErr != nil
		mu.Unlock()
		if failed || ctx.Err() != nil {
			break
		}
		res.Sent++
		cl.Produce(ctx, &kgo.Record{Key: []byte(l.Key), Value: l.Value}, func(r *kgo.Record, err error) {
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil && errors.Is(err, context.Canceled) && ctx.Err() != nil:
				res.Dropped++ // interrupted: not a failure of its own
			case err != nil && res.SendErr == nil:
				res.SendErr = &RecordError{Key: l.Key, Err: err}
			case err == nil:
				res.Summary.Add(l, r.Partition)
				if cfg.OnAck != nil {
					cfg.OnAck()
				}
			}
		})
	}
	if ctx.Err() != nil {
		res.Interrupted = true
		if cfg.OnInterrupt != nil {
			cfg.OnInterrupt()
		}
	}
	// Records fail after cfg.Delivery at the latest; the margin covers a
	// batch in flight when that expires.
	flushCtx, cancel := context.WithTimeout(context.Background(), cfg.Delivery+10*time.Second)
	defer cancel()
	flushErr := cl.Flush(flushCtx)
	mu.Lock()
	defer mu.Unlock()
	if res.SendErr == nil && flushErr != nil {
		res.SendErr = fmt.Errorf("flush: %w", flushErr)
	}
	return res, nil
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

// Problems words what stopped a Send, one line each, and says whether it
// is only bad input (usage: a bad line before anything was sent). A record
// not acknowledged within the delivery timeout names delivery (how the
// caller calls that setting, such as "--delivery 30s"); interrupted says
// ctx ended, which is a problem when nothing else is. No lines: every
// record was acknowledged.
func (r Result) Problems(delivery string, interrupted bool) (lines []string, usage bool) {
	sendErr := r.SendErr
	var re *RecordError
	if errors.As(sendErr, &re) && errors.Is(re.Err, kgo.ErrRecordTimeout) {
		sendErr = fmt.Errorf("produce order %s: not acknowledged within %s (brokers down or unreachable?): %w", re.Key, delivery, re.Err)
	}
	switch {
	case r.LineErr != nil && r.Sent == 0 && sendErr == nil:
		return []string{r.LineErr.Error()}, true
	case r.LineErr != nil:
		lines = []string{fmt.Sprintf("%v; stopped at this line after sending %d records (%d acknowledged)", r.LineErr, r.Sent, r.Summary.Records)}
		if sendErr != nil {
			lines = append(lines, sendErr.Error())
		}
		return lines, false
	case sendErr != nil:
		return []string{sendErr.Error()}, false
	case interrupted:
		return []string{fmt.Sprintf("interrupted after %d acknowledged records (%d more cancelled, unsent or unconfirmed)", r.Summary.Records, r.Dropped)}, false
	}
	return nil, false
}
