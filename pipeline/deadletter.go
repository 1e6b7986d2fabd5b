package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
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
)

// DeadLetterConfig says where poison records go.
//
// The dead-letter record has the source record's key, value and headers,
// plus HeaderError, HeaderSourceTopic, HeaderSourcePartition,
// HeaderSourceOffset and HeaderAttempts. It goes to partition p mod N of the
// dead-letter topic (N its partition count) for source partition p, written
// synchronously with acks from all in-sync replicas; only then is the
// source record landed, so its offset can be committed.
//
// Exactly once across crashes and rebalances: before writing, the worker
// claims a marker in Redis, Prefix+"dlq:"+topic+":"+partition+":"+offset,
// with SET NX as pending with a lease, naming its term; after the write it
// marks it done. A replay that finds the marker done does not write again
// (Stats.DeadLetterReplays). One that finds a pending marker whose lease
// lapsed, or its own from an earlier failed try, cannot know whether the
// write happened: it reads the dead-letter partition from the marker's
// claim time (less a minute of clock slack) to its end, looking for a record
// with the same source headers, and writes only when there is none. A live
// foreign lease is waited for. A write must end within 80% of the lease: a
// record not yet sent by then is failed by franz-go, so a consumer frozen
// (SIGSTOP, a VM pause) before sending does not write late. What is left: a
// request already on its way that the broker takes longer than the lease to
// append (franz-go keeps retrying an idempotent write it may have sent), or
// clocks of two hosts more than a fifth of the lease apart. The markers cost
// two Redis round trips per poison record and live for TTL.
//
// A worker whose term is fenced (its partition revoked past the revoke
// timeout, or lost) stops delivering at once, even while it waits for a
// foreign lease, scans or writes: it writes no dead letter after that, and
// the next owner delivers the record. The scan reads control records too,
// so a transactional writer to the dead-letter topic cannot make it wait for
// a record that never comes. It reads in steps of ScanBound, each from where
// the last stopped, up to the partition's end as of the scan's start; a step
// that reads nothing stops the pipeline (ErrDeadLetter) naming the
// dead-letter partition.
//
// The scan can only find what is still there, where it looks: if retention
// removed the earlier write (or it was appended more than a minute before
// the marker's time, by a clock that far off), or the dead-letter topic's
// partition count changed since (p mod N then names another partition),
// the record is not found and is written again: a second copy, never none.
//
// Failures are retried with a backoff doubling from 100ms to 5s, with the
// offset uncommitted, while a retry can help (Kafka or Redis down, a leader
// moving). One that no retry can land stops the pipeline with an error
// wrapping ErrDeadLetter, naming the poison record's partition and offset
// and the cause, after committing what landed before it; the record stays
// uncommitted, so nothing is dropped silently and a partition never stalls
// forever on one record. These are: a record larger than the dead-letter
// topic's max.message.bytes (kerr.MessageTooLarge: give the dead-letter
// topic at least the source topic's max.message.bytes), kerr.InvalidRecord
// (a compacted dead-letter topic refuses a record without a key), an authorization
// failure (TopicAuthorizationFailed, ClusterAuthorizationFailed), a
// dead-letter topic still unknown a Lease after the first try, and a marker
// key Redis refuses (WRONGTYPE, NOPERM) or that holds something else than a
// marker.
type DeadLetterConfig struct {
	// Redis holds the markers. Required.
	Redis redis.UniversalClient
	// Prefix starts every marker key (Prefix + "dlq:" + topic:partition:offset).
	// Required. Give it a prefix apart from the ledger's, so that no business
	// key can name a marker.
	Prefix string
	// Topic receives every poison record; empty means "<source topic>.dlq".
	Topic string
	// TTL is how long a marker lives (default 7 days): a replay older than
	// this writes the record again. Match the ledger's TTL.
	TTL time.Duration
	// Lease bounds one write (default 30s): a successor waits this long for
	// a claim whose owner died mid-write. A dead-letter topic unknown for
	// this long stops the pipeline (ErrDeadLetter).
	Lease time.Duration
	// ScanBound bounds each step of the scan for an earlier write of a
	// record whose marker was left pending (default 1 minute). A step that
	// read records is followed by the next from where it stopped, so the
	// scan always progresses to the partition's end; one that read nothing
	// stops the pipeline (ErrDeadLetter) naming the dead-letter partition
	// and how far the scan got.
	ScanBound time.Duration
}

func (d *DeadLetterConfig) validate() error {
	if d.TTL == 0 {
		d.TTL = 7 * 24 * time.Hour
	}
	if d.Lease == 0 {
		d.Lease = 30 * time.Second
	}
	if d.ScanBound == 0 {
		d.ScanBound = time.Minute
	}
	switch {
	case d.Redis == nil:
		return errors.New("dead letters: no Redis client for the markers")
	case d.Prefix == "":
		return errors.New("dead letters: empty marker prefix")
	case d.TTL < time.Millisecond || d.Lease < time.Millisecond || d.ScanBound < time.Millisecond:
		return fmt.Errorf("dead letters: TTL %v, lease %v and scan bound %v must be at least 1ms", d.TTL, d.Lease, d.ScanBound)
	}
	return nil
}

// DeadLetterTopic returns the dead-letter topic for source under topic (the
// DeadLetterConfig.Topic): topic itself, or source+".dlq" when it is empty.
func DeadLetterTopic(topic, source string) string {
	if topic != "" {
		return topic
	}
	return source + ".dlq"
}

// deadLetters writes poison records to their dead-letter topics.
type deadLetters struct {
	cfg   DeadLetterConfig
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
		marks: newMarks(d.Redis, d.TTL), parts: make(map[string]int32)}, nil
}

// dlqOutcome says what deliver did.
type dlqOutcome uint8

const (
	dlqWritten  dlqOutcome = iota + 1 // written now
	dlqReplayed                       // found written before
)

// deliver lands r in its dead-letter topic exactly once, for the term
// owner, while ctx lasts: ctx ends when the term is fenced, and deliver then
// neither waits, scans nor writes any longer. Any error leaves r unlanded:
// the caller retries it or, when judgeDLQ says so, stops.
func (d *deadLetters) deliver(ctx context.Context, owner string, r *sink.Record, cause error, attempts int) (dlqOutcome, error) {
	topic := DeadLetterTopic(d.cfg.Topic, r.Topic)
	n, err := d.partitions(ctx, topic)
	if err != nil {
		return 0, err
	}
	part := r.Partition % n
	key := d.cfg.Prefix + "dlq:" + r.Topic + ":" + strconv.Itoa(int(r.Partition)) + ":" + strconv.FormatInt(r.Offset, 10)
	for {
		now := time.Now()
		mine := mark{State: markPending, Owner: owner, At: now.UTC(), Until: now.Add(d.cfg.Lease).UTC()}
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
			mine.At, mine.Until = now.UTC(), now.Add(d.cfg.Lease).UTC()
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
		if err := d.write(ctx, mine, topic, part, r, cause, attempts); err != nil {
			return 0, err
		}
		done := mine
		done.State = markDone
		// Written. Should marking it done fail, a replay finds the pending
		// marker and then the record, and does not write it again.
		// Even fenced meanwhile: the record is there, and done spares the
		// next owner a lease's wait and a scan.
		mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.cfg.Lease)
		_, _ = d.marks.swap(mctx, key, mine.encode(), done)
		cancel()
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
