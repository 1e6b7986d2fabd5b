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

	// A placeholder, written in place of a dead letter the topic refuses
	// as too large, carries these besides the five above.
	HeaderTooLarge    = "shardpipe-too-large"    // the refusal of the dead letter, as text
	HeaderSourceKey   = "shardpipe-source-key"   // the source key's length and SHA-256: "N bytes, sha256 <hex>"
	HeaderSourceValue = "shardpipe-source-value" // the source value's length and SHA-256, the same way
)

// DeadLetters makes poison records go to a dead-letter topic once their
// attempts are spent, instead of stopping the pipeline (the default). The
// markers that make each write land once live in rdb (required) under
// prefix (required; give it a prefix apart from the ledger's, so that no
// business key can name a marker). opts set the topic (DeadLetterTo), the
// markers' TTL (DeadLetterTTL), the write's lease (DeadLetterLease), the
// scan's step (DeadLetterScanBound) and the bounds on poison storms
// (DeadLetterMaxRun, DeadLetterMaxShare: by default more than 50 poison
// records in a row, or more than 20% of a partition's last 1,000 records,
// stop the pipeline with ErrPoisonStorm instead of dead-lettering a topic
// a configuration mistake made unreadable).
//
// The dead-letter record has the source record's key, value and headers,
// plus HeaderError (the cause, within 1 KiB, a long key named by a prefix,
// its length and a short hash), HeaderSourceTopic, HeaderSourcePartition,
// HeaderSourceOffset and HeaderAttempts. One the topic refuses as too large
// (kerr.MessageTooLarge, kerr.RecordListTooLarge) is replaced, within the
// same write, by a placeholder of a few hundred bytes: no key, no value and
// none of the source record's headers, only those five plus HeaderTooLarge (the
// refusal), HeaderSourceKey and HeaderSourceValue (length and SHA-256), so
// the partition moves on and the record can be fetched from its source
// topic by offset while that retains it. The placeholder counts as the
// dead letter: its marker, the scan (it has the source headers) and
// PartitionStats.DeadLettered treat it as one; if the topic refuses even
// the placeholder, the pipeline stops (below). Either goes to partition p
// mod N of the dead-letter topic (N its partition count) for source partition p, written
// synchronously with acks from all in-sync replicas; only then is the
// source record landed, so its offset can be committed.
//
// Exactly once across crashes and rebalances: before writing, the worker
// claims a marker in Redis, prefix+"dlq:"+topic+":"+partition+":"+offset,
// with SET NX as pending with a lease, naming its term; after the write it
// marks it done. A replay that finds the marker done does not write again
// (PartitionStats.DeadLetterReplays). One that finds a pending marker whose lease
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
// two Redis round trips per poison record and live for DeadLetterTTL.
//
// A worker whose term is fenced (its partition revoked past the revoke
// timeout, or lost) stops delivering at once, even while it waits for a
// foreign lease, scans or writes: it writes no dead letter after that, and
// the next owner delivers the record. The scan reads control records too,
// so a transactional writer to the dead-letter topic cannot make it wait for
// a record that never comes. It reads in steps of DeadLetterScanBound, each from where
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
// moving). One that no retry can land stops the pipeline with a
// *RecordError wrapping ErrDeadLetter, naming the poison record's partition
// and offset and the cause, after committing what landed before it; the record stays
// uncommitted, so nothing is dropped silently and a partition never stalls
// forever on one record. These are: a placeholder still larger than the
// dead-letter topic's max.message.bytes (kerr.MessageTooLarge), kerr.InvalidRecord
// (a compacted dead-letter topic refuses a record, or a placeholder,
// without a key), an authorization
// failure (TopicAuthorizationFailed, ClusterAuthorizationFailed), a
// dead-letter topic still unknown a DeadLetterLease after the first try, and a marker
// key Redis refuses (WRONGTYPE, NOPERM) or that holds something else than a
// marker.
func DeadLetters(rdb redis.UniversalClient, prefix string, opts ...DeadLetterOpt) Opt {
	d := deadLetterConfig{redis: rdb, prefix: prefix}
	for _, o := range opts {
		if o != nil {
			o.applyDeadLetter(&d)
		}
	}
	return opt(func(c *config) {
		own := d // validate fills in defaults: each pipeline gets its own copy
		c.deadLetters = &own
	})
}

// DeadLetterOpt is an option of DeadLetters.
type DeadLetterOpt interface {
	applyDeadLetter(*deadLetterConfig)
}

type deadLetterOpt func(*deadLetterConfig)

func (o deadLetterOpt) applyDeadLetter(d *deadLetterConfig) { o(d) }

// DeadLetterTo sends every poison record to topic. Default (and for an
// empty topic): "<source topic>.dlq" (see DeadLetterTopic). The topic must
// exist; give it at least the source topic's max.message.bytes, or larger
// records land there as placeholders (see DeadLetters).
func DeadLetterTo(topic string) DeadLetterOpt {
	return deadLetterOpt(func(d *deadLetterConfig) { d.topic = topic })
}

// DeadLetterTTL sets how long a marker lives (default 7 days; at least
// 1ms): a replay older than this writes the record again. Match the
// ledger's TTL.
func DeadLetterTTL(ttl time.Duration) DeadLetterOpt {
	return deadLetterOpt(func(d *deadLetterConfig) { d.ttl = ttl })
}

// DeadLetterLease bounds one write (default 30s; at least 1ms): a
// successor waits this long for a claim whose owner died mid-write, and a
// dead-letter topic unknown for this long stops the pipeline
// (ErrDeadLetter).
func DeadLetterLease(lease time.Duration) DeadLetterOpt {
	return deadLetterOpt(func(d *deadLetterConfig) { d.lease = lease })
}

// DeadLetterScanBound bounds each step of the scan for an earlier write of
// a record whose marker was left pending (default 1 minute; at least 1ms).
// A step that read records is followed by the next from where it stopped,
// so the scan always progresses to the partition's end; one that read
// nothing stops the pipeline (ErrDeadLetter) naming the dead-letter
// partition and how far the scan got.
func DeadLetterScanBound(bound time.Duration) DeadLetterOpt {
	return deadLetterOpt(func(d *deadLetterConfig) { d.scanBound = bound })
}

// deadLetterConfig is what DeadLetters and its options set: zero durations
// take their defaults in validate.
type deadLetterConfig struct {
	redis     redis.UniversalClient
	prefix    string
	topic     string
	ttl       time.Duration
	lease     time.Duration
	scanBound time.Duration
	// the poison storm bounds (poisonstorm.go); unset: their defaults
	maxRun      int
	maxShare    float64
	window      int
	maxRunSet   bool
	maxShareSet bool
}

func (d *deadLetterConfig) validate() error {
	if d.ttl == 0 {
		d.ttl = 7 * 24 * time.Hour
	}
	if d.lease == 0 {
		d.lease = 30 * time.Second
	}
	if d.scanBound == 0 {
		d.scanBound = time.Minute
	}
	if !d.maxRunSet {
		d.maxRun, d.maxRunSet = DefaultDeadLetterMaxRun, true
	}
	if !d.maxShareSet {
		d.maxShare, d.window, d.maxShareSet = DefaultDeadLetterMaxShare, DefaultDeadLetterWindow, true
	}
	switch {
	case d.maxRun < 0:
		return fmt.Errorf("dead letters: max run %d: want 0 (no bound) or more", d.maxRun)
	case d.maxShare < 0 || d.maxShare > 1:
		return fmt.Errorf("dead letters: max share %v: want 0 (no bound) to 1", d.maxShare)
	case d.maxShare > 0 && d.window < 1:
		return fmt.Errorf("dead letters: max share window %d: want at least 1 record", d.window)
	}
	switch {
	case d.redis == nil:
		return errors.New("dead letters: no Redis client for the markers")
	case d.prefix == "":
		return errors.New("dead letters: empty marker prefix")
	case d.ttl < time.Millisecond || d.lease < time.Millisecond || d.scanBound < time.Millisecond:
		return fmt.Errorf("dead letters: TTL %v, lease %v and scan bound %v must be at least 1ms", d.ttl, d.lease, d.scanBound)
	}
	return nil
}

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
