package pipeline

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/sink"
)

// Headers a dead-letter record carries after the source record's own.
const (
	HeaderError           = "shardpipe-error"            // the cause, as text
	HeaderSourceTopic     = "shardpipe-source-topic"     // the source record's topic
	HeaderSourcePartition = "shardpipe-source-partition" // its partition, decimal
	HeaderSourceOffset    = "shardpipe-source-offset"    // its offset, decimal
	HeaderAttempts        = "shardpipe-attempts"         // attempts made, decimal

	// A placeholder, written in place of a dead letter the topic refuses
	// as too large, carries these besides the five above.
	HeaderTooLarge    = "shardpipe-too-large"    // the refusal of the dead letter, as text
	HeaderSourceKey   = "shardpipe-source-key"   // the source key's length and SHA-256: "N bytes, sha256 <hex>"
	HeaderSourceValue = "shardpipe-source-value" // the source value's length and SHA-256, the same way
)

// DeadLetterTopic returns the dead-letter topic of source when DeadLetterTo
// was given topic: topic itself, or source+".dlq" when it is empty.
func DeadLetterTopic(topic, source string) string {
	if topic != "" {
		return topic
	}
	return source + ".dlq"
}

// deadLetters writes poison records to their dead-letter topics.
type deadLetters struct {
	cfg   deadLetterConfig
	cl    *kgo.Client // producer, manual partitioner; also the scans' admin client
	seeds []string
	kopts []kgo.Opt
	marks marks

	mu    sync.Mutex
	parts map[string]int32 // dead-letter topic -> partition count
}

func newDeadLetters(cfg config) (*deadLetters, error) {
	d := cfg.deadLetters
	opts := append(append([]kgo.Opt{kgo.WithLogger(kgoLogger{cfg.logger})}, cfg.kgoOpts...),
		kgo.SeedBrokers(cfg.brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		// A broker shutting down closes new connections mid-handshake;
		// without this franz-go takes that for a SASL/TLS mistake and
		// fails the write at once instead of retrying.
		kgo.AlwaysRetryEOF())
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("pipeline: dead-letter client: %w", err)
	}
	return &deadLetters{cfg: *d, cl: cl, seeds: cfg.brokers, kopts: cfg.kgoOpts,
		marks: newMarks(d.redis, d.ttl), parts: make(map[string]int32)}, nil
}

// dlqOutcome says what deliver did.
type dlqOutcome uint8

const (
	dlqWritten     dlqOutcome = iota + 1 // written now
	dlqReplayed                          // found written before
	dlqPlaceholder                       // too large: a placeholder written now in its place (deadLetter reports dlqWritten)
)

// deliver lands r in its dead-letter topic exactly once, for the term
// owner, while ctx lasts: ctx ends when the term is fenced, and deliver then
// neither waits, scans nor writes any longer. Any error leaves r unlanded:
// the caller retries it or, when judgeDLQ says so, stops.
func (d *deadLetters) deliver(ctx context.Context, owner string, r *sink.Record, cause error, attempts int) (dlqOutcome, error) {
	topic := DeadLetterTopic(d.cfg.topic, r.Topic)
	n, err := d.partitions(ctx, topic)
	if err != nil {
		return 0, err
	}
	part := r.Partition % n
	key := d.cfg.prefix + "dlq:" + r.Topic + ":" + strconv.Itoa(int(r.Partition)) + ":" + strconv.FormatInt(r.Offset, 10)
	for {
		now := time.Now()
		mine := mark{State: markPending, Owner: owner, At: now.UTC(), Until: now.Add(d.cfg.lease).UTC()}
		prior, raw, claimed, err := d.marks.claim(ctx, key, mine)
		if err != nil {
			return 0, err
		}
		if !claimed {
			switch {
			case prior.State == markDone:
				return dlqReplayed, nil
			case prior.Owner != owner && time.Now().Before(prior.Until):
				if err := sleepCtx(ctx, time.Until(prior.Until)+10*time.Millisecond); err != nil {
					return 0, err
				}
				continue
			}
			// Ours from a failed try, or a lapsed lease: was it written?
			found, err := d.find(ctx, topic, part, prior.At.Add(-time.Minute), r)
			if err != nil {
				return 0, err
			}
			if err := ctx.Err(); err != nil { // fenced during the scan
				return 0, err
			}
			if found {
				done := prior
				done.State = markDone
				if _, err := d.marks.swap(ctx, key, raw, done); err != nil {
					return 0, err
				}
				return dlqReplayed, nil
			}
			now = time.Now() // the scan took time: the lease starts now
			mine.At, mine.Until = now.UTC(), now.Add(d.cfg.lease).UTC()
			if ok, err := d.marks.swap(ctx, key, raw, mine); err != nil || !ok {
				if err != nil {
					return 0, err
				}
				continue // someone else took it meanwhile
			}
		}
		if err := ctx.Err(); err != nil { // fenced while claiming
			return 0, err
		}
		placed, err := d.write(ctx, mine, topic, part, r, cause, attempts)
		if err != nil {
			return 0, err
		}
		done := mine
		done.State = markDone
		// Written. Should marking it done fail, a replay finds the pending
		// marker and then the record, and does not write it again.
		// Even fenced meanwhile: the record is there, and done spares the
		// next owner a lease's wait and a scan.
		mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.cfg.lease)
		_, _ = d.marks.swap(mctx, key, mine.encode(), done)
		cancel()
		if placed {
			return dlqPlaceholder, nil
		}
		return dlqWritten, nil
	}
}

func (d *deadLetters) close() { d.cl.Close() }

func sleepCtx(ctx context.Context, dur time.Duration) error {
	t := time.NewTimer(dur)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
