package pipeline

import (
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/plugin/kotel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// GroupOpt is an option of New, a consumer group run. Options that apply to
// a Replay as well are Opt, which is a GroupOpt too; the ones that only make
// sense in a group (Topics, Group, GroupProtocol, StartAtLatest,
// SessionTimeout, RevokeTimeout) are GroupOpt alone, so passing one to
// NewReplay does not compile.
type GroupOpt interface {
	apply(*config)
	groupOpt()
}

// ReplayOpt is an option of NewReplay. Options that apply to a group run as
// well are Opt, which is a ReplayOpt too; the ones that only make sense in a
// replay (CheckpointPrefix, PlanGiven) are ReplayOpt alone, so passing one
// to New does not compile.
type ReplayOpt interface {
	apply(*config)
	replayOpt()
}

// Opt is an option of both New and NewReplay: it is a GroupOpt and a
// ReplayOpt. A []Opt is not a []GroupOpt: pass it as one value with
// Options, or element by element.
type Opt interface {
	GroupOpt
	ReplayOpt
}

// Options bundles opts into one Opt that applies them in order: a list of
// settings built once for both kinds of run (a command's commit policy,
// poison handling, tracing) goes to New or NewReplay as one value, the
// scopes still checked at compile time. It costs nothing past the options
// themselves.
func Options(opts ...Opt) Opt {
	return opt(func(c *config) {
		for _, o := range opts {
			o.apply(c)
		}
	})
}

// The three kinds of option, as kgo scopes its own: each is a func over the
// config with the marker methods of the constructors that accept it.
type (
	opt       func(*config) // New and NewReplay
	groupOpt  func(*config) // New only
	replayOpt func(*config) // NewReplay only
)

func (o opt) apply(c *config)       { o(c) }
func (opt) groupOpt()               {}
func (opt) replayOpt()              {}
func (o groupOpt) apply(c *config)  { o(c) }
func (groupOpt) groupOpt()          {}
func (o replayOpt) apply(c *config) { o(c) }
func (replayOpt) replayOpt()        {}

// Brokers sets the seed brokers (host:port). Required. Repeated calls add.
func Brokers(addrs ...string) Opt {
	return opt(func(c *config) { c.brokers = append(c.brokers, addrs...) })
}

// Topics adds topics for the group to consume. Required; repeated calls add.
// A replay names its one topic in NewReplay instead.
func Topics(topics ...string) GroupOpt {
	return groupOpt(func(c *config) { c.topics = append(c.topics, topics...) })
}

// Group sets the consumer group ID. Required. Its members share the topics'
// partitions, and its committed offsets are where a restart resumes.
func Group(group string) GroupOpt { return groupOpt(func(c *config) { c.group = group }) }

// Sink sets the effect boundary: a sink.Ledger (record mode), Guarded (an
// external effect through a sink.Guard) or any Applier. Required.
func Sink(a Applier) Opt { return opt(func(c *config) { c.applier = a }) }

// GroupProtocol selects Classic (the default) or Consumer (KIP-848).
func GroupProtocol(p Protocol) GroupOpt { return groupOpt(func(c *config) { c.protocol = p }) }

// StartAtLatest makes a group with no committed offset start at the end of
// each partition. The default is the earliest offset: a new group processes
// every retained order.
func StartAtLatest() GroupOpt { return groupOpt(func(c *config) { c.startEarliest = false }) }

// InstanceID makes the pipeline a static member of its group
// (group.instance.id, KIP-345; in the consumer protocol, KIP-848's static
// membership): a process that restarts with the same ID within the session
// timeout gets its partitions back without a rebalance of the group.
//
// What it changes about stopping: Close and the end of Run's context still
// drain and commit every partition, but the pipeline does not leave the
// group. In the classic protocol no LeaveGroup is sent (franz-go sends one
// only when the member revoked partitions in a rebalance it had not
// finished), and the partitions stay assigned to the ID, unconsumed, until
// a process with that ID returns or SessionTimeout passes. In the consumer
// protocol the final heartbeat is a temporary leave (member epoch -2),
// which should keep them reserved until the broker's
// group.consumer.session.timeout.ms; but with franz-go v1.22.3 on Kafka 4
// a restart right after it was refused (UNRELEASED_INSTANCE_ID) for some
// seconds, during which the group gave its partitions to other members:
// rely on it in the classic protocol only. Each process
// needs its own ID: one that joins with an ID in use fences the other,
// whose commits the broker then refuses. Default: none (dynamic
// membership: a stop leaves at once and the group rebalances); an empty
// id is the same as none.
func InstanceID(id string) GroupOpt {
	return groupOpt(func(c *config) { c.instanceID = id })
}

// SessionTimeout sets the classic protocol's session timeout (default
// franz-go's 45s). The consumer protocol takes it from the broker. Shorter
// finds a dead member sooner and makes a stalled one lose its partitions
// sooner.
func SessionTimeout(d time.Duration) GroupOpt {
	return groupOpt(func(c *config) { c.sessionTimeout = d })
}

// RevokeTimeout bounds how long a revoke waits for a worker's in-flight batch
// (default 20s, keep it below the group's rebalance timeout; positive). A
// worker that misses it is fenced: its later commits fail with
// checkpoint.ErrStaleEpoch.
func RevokeTimeout(d time.Duration) GroupOpt {
	return groupOpt(func(c *config) { c.revokeTimeout = d })
}

// ShutdownTimeout bounds the drain when Run's context ends or Close is
// called (default 30s; positive): a partition still busy then is abandoned
// without its final commit, so nothing past an unlanded record is committed.
func ShutdownTimeout(d time.Duration) Opt { return opt(func(c *config) { c.shutdown = d }) }

// KafkaOptions appends raw franz-go options (TLS, SASL, client ID) to every
// client the pipeline or replay makes. Options that change group semantics
// (autocommit, balancers, isolation level) are overridden.
func KafkaOptions(opts ...kgo.Opt) Opt {
	return opt(func(c *config) { c.kgoOpts = append(c.kgoOpts, opts...) })
}

// Commits: how often, how far past the last commit, and what must hold
// before one.

// CommitEvery commits after n landed records per partition (default 500;
// 0 turns the count trigger off). Batches are cut so commits fall exactly
// every n records, so n also caps the records of one sink call (with
// MaxBatch). Smaller n means fewer records read again after a crash (the
// ledger suppresses them) and more Redis and commit round trips: at 100 the
// pipeline spends about a third more CPU per record than at 500 (see
// BENCHMARKS.md).
func CommitEvery(n int) Opt { return opt(func(c *config) { c.policy.Every = n }) }

// CommitInterval commits landed records at most d after the first of them
// landed (default 5s; 0 turns the time trigger off). Shorter means fewer
// replays after a crash of an idle partition and more commit round trips.
func CommitInterval(d time.Duration) Opt { return opt(func(c *config) { c.policy.Interval = d }) }

// MaxUncommitted bounds the records of a partition that land past its last
// commit (default 10 x the larger of CommitEvery and MaxBatch; at least
// CommitEvery). Reaching it makes a commit due at once; while commits fail,
// the partition's worker takes no more records (its queue fills and its
// fetching pauses) until one succeeds. It is what a crash re-reads at most
// per partition while commits fail; while they succeed a crash re-reads at
// most CommitEvery records (or CommitInterval worth).
func MaxUncommitted(n int) Opt { return opt(func(c *config) { c.maxUncommitted = n }) }

// BeforeCommit makes every offset commit, of a group Pipeline and of a
// Replay, wait for b first: the commit is sent only after b.Wait returned
// nil. A failed wait counts as a failed commit: nothing is committed, the
// commit is retried with backoff at the next commit point, and records keep
// being applied meanwhile. Its cost is one b.Wait per commit, on the
// partition's worker. Default: none (a commit follows its effects at once).
func BeforeCommit(b Barrier) Opt { return opt(func(c *config) { c.barrier = b }) }

// CountOnce makes PartitionStats.Applied count each record once over the
// group's life, summed over its processes: a worker raises m's mark to a
// commit point before it sends the commit, and counts the records below
// it then, so a commit whose reply was lost is counted by the process
// that sent it; a record the group reads again below the mark (after
// reset-offsets moved back) whose claim names it (Redelivered) is not
// counted again, only Suppressed. A record whose key had to be applied
// again (its claim expired) is counted: its effect ran again. It costs one
// Raise per commit and one Highest per term (retried until it answers or
// the term ends); a Raise that fails holds no commit back (its records
// are then counted on the commit's success, as without it). Without it,
// Applied counts on the commit's success and after reset-offsets counts
// again. Replays do not use it.
func CountOnce(m CommitMarker) GroupOpt { return groupOpt(func(c *config) { c.marks = m }) }

// Batches and concurrent effects.

// MaxBatch caps the records in one sink call (default 500; at least 1). A
// larger batch costs more memory and a longer revoke; a smaller one more
// Redis round trips.
func MaxBatch(n int) Opt { return opt(func(c *config) { c.maxBatch = n }) }

// QueueRecords bounds a partition's queue in records (default 4 x
// MaxBatch, 2,000 at the default MaxBatch; at least MaxBatch). A queue
// that reaches QueueRecords records or QueueBytes bytes, whichever comes
// first, pauses its partition's fetching, which resumes once the worker
// has taken the queue below half of both. So a queue holds about the bound
// it reaches at most, plus one fetch of the partition (256 KiB of record
// batches as fetched, New's kgo.FetchMaxPartitionBytes, or one larger
// batch; more once compressed batches are decoded); the worker holds the
// batch it applies besides. With MaxInFlight
// QueueRecords also caps the records a partition holds in flight (taken
// from the queue, not yet landed), which QueueBytes does not bound.
//
// A pause costs no fetch: the pipeline polls everything franz-go has
// fetched into the queues before it pauses a partition, so nothing
// fetched for it is dropped (franz-go drops what it still buffers for a
// paused partition, and fetches it again after the resume: polling 2,000
// records at a time, record mode decoded 11-12% more records than it
// consumed; BENCHMARKS.md, "Fetched twice"). Records of about 1 KiB reach
// both bounds together; a queue of smaller records holds 2,000 of them,
// one of 10 KiB records about 200 (a tenth of its memory without the byte
// bound): raise QueueBytes where memory allows and the partition pauses
// too often.
func QueueRecords(n int) Opt { return opt(func(c *config) { c.queueRecords = n }) }

// QueueBytes bounds a partition's queue in bytes, beside QueueRecords
// (default 2 MiB; at least 1); see QueueRecords for the pause it makes,
// what it costs and how the two defaults divide the work. A record counts
// its key, its value, and its headers' keys and values. franz-go's own
// record (about 170 bytes each) and the fetch buffers that queued records
// keep alive are not counted: the bound is approximate, and the memory a
// queue holds can be more. A record larger than the bound still makes
// progress: it pauses the partition alone, the worker takes it, and
// fetching resumes.
func QueueBytes(n int) Opt { return opt(func(c *config) { c.queueBytes = n }) }

// MaxInFlight runs up to n records' effects of a partition at once
// (default 0: batches of MaxBatch, one after another). Records of the same
// record key (what the producer partitioned by: an order, a customer) run
// one after another in offset order; records without a record key are
// ordered by their business key (a Keyer's, as Guarded and sink.Ledger
// say it), or run alone. Records of different keys run at once, each in
// its own Apply call, the lowest offset first. Two records of one business
// key but different record keys may run at once: the ledger still lets one
// effect land (a guard claim makes the other wait and be suppressed). The commit point stays before the lowest offset
// whose effect has not landed, so a crash re-reads at most MaxUncommitted
// records of a partition, landed or not. A record whose effect fails waits
// for its retry without holding up other keys (see EffectAttempts); while
// it waits, the commit point cannot pass it, and once MaxUncommitted
// records of the partition lie past the last commit, the partition takes
// no more until it lands (PartitionStats.Retrying shows such records).
//
// It costs one goroutine per running effect and, in record mode, one Redis
// round trip per record instead of one per batch: use it where the effect's
// latency, not Redis, bounds the rate (an external call in guard mode).
// n must be 0 to 4096. MaxInFlightTotal caps the effects running at once in
// the whole pipeline.
func MaxInFlight(n int) Opt { return opt(func(c *config) { c.maxInFlight = n }) }

// MaxInFlightTotal caps the effects running at once across every
// partition of the pipeline, with MaxInFlight (default 1024; at least 1).
// A partition whose next record finds the cap reached waits for a slot.
func MaxInFlightTotal(n int) Opt { return opt(func(c *config) { c.maxInFlightTotal = n }) }

// EffectAttempts is how many times a record whose effect fails
// (ErrEffectFailed) is attempted before it is given up (default 5; at
// least 1), in batches and with MaxInFlight alike: dead-lettered when
// DeadLetters are configured, else the pipeline stops on it. An effect
// error wrapping sink.ErrRejected is given up at once. Retries wait the
// backoff of failed batches (100ms doubling to 5s). With MaxInFlight the
// record's key's later records wait and other keys go on; in batches the
// batch waits, its records before the failing one landed (and committed
// when due). Failures of unknown outcome (Redis unreachable, a timed-out
// call) and effects whose system is down (sink.ErrUnavailable) are not
// given up: they are retried until the term ends.
func EffectAttempts(n int) Opt { return opt(func(c *config) { c.effectAttempts = n }) }

// StopOnEffectFailure makes a record whose effect is given up (see
// EffectAttempts) stop the pipeline even when DeadLetters are configured:
// the partition's offset stays before it, and what landed before it is
// committed.
func StopOnEffectFailure() Opt { return opt(func(c *config) { c.stopOnEffectFailure = true }) }

// Records that fail for good: poison records and effects given up.

// PoisonAttempts sets how many times in all a poison record (one the sink
// cannot decode: sink.ErrNoKey, ErrBadValue, ErrCrossSlot) is applied, with
// capped backoff between attempts, before it is dead-lettered or stops the
// pipeline (default 3; at least 1). Each extra attempt costs one sink call
// for the batch's poison records and up to 2s of the partition's time. A
// stop that gives up (Close, a revoke) ends the waiting: the record fails
// for good then, with the attempts made.
func PoisonAttempts(n int) Opt { return opt(func(c *config) { c.poisonAttempts = n }) }

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
	d := deadLetterConfig{redis: rdb, prefix: prefix,
		maxRun: DefaultDeadLetterMaxRun, maxShare: DefaultDeadLetterMaxShare, window: DefaultDeadLetterWindow}
	for _, o := range opts {
		if o != nil {
			o.applyDeadLetter(&d)
		}
	}
	return opt(func(c *config) {
		own := d // config.validate fills in defaults: each pipeline gets its own copy
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

// DeadLetterMaxRun bounds the records that failed for good (poison
// records after their attempts, effects given up) with no success of their
// partitions since, summed over the pipeline's partitions (default
// DefaultDeadLetterMaxRun; 0: no bound). The record that would make the sum
// exceed n stops the pipeline with a *RecordError wrapping ErrPoisonStorm,
// its partition's committed offset before it.
//
// A record that failed for good is held, not dead-lettered: unlanded, the
// committed offset stays before it, until a later record of its partition
// succeeds, which shows it was a poison record between good ones: the
// held records below that success are dead-lettered and landed, in offset
// order (each through the DeadLetterMaxShare bound). The bound counts the
// held records, so a run of failures, whether it begins before any success
// (a mistyped key field, an effect that refuses every call) or after some
// (a receiver that starts refusing), dead-letters nothing and commits
// nothing past its first failure: PoisonStormError.NoSuccess says which,
// and First names the offset to start from once the cause is fixed. With
// MaxInFlight the run is in offset order: a failure below a success that
// already landed is dead-lettered at once. A replay's partition that reads
// its range to the end holding records stops the same way when none of its
// records succeeded, and dead-letters them when some did. A term that ends
// holding records leaves them to the partition's next owner. A partition
// that has seen a success and then holds records while it reads nothing
// new for the commit interval (CommitInterval; 5s when 0) dead-letters
// them and commits past them: they still count in its run until a later
// record succeeds, so a storm that trickles in one record at a time stops
// at the bound too, with at most n dead-lettered (PoisonStormError's
// DeadLettered). It costs the held records' memory, at most n, and a
// commit interval of delay for a poison record that ends what was
// produced. With n = 0 (no bound) nothing is held: a failure is
// dead-lettered at once.
func DeadLetterMaxRun(n int) DeadLetterOpt {
	return deadLetterOpt(func(d *deadLetterConfig) { d.maxRun = n })
}

// DeadLetterMaxShare bounds the share of poison records among a
// partition's last window records (default DefaultDeadLetterMaxShare of
// DefaultDeadLetterWindow; share 0: no bound): the poison record that makes
// more than share x window of them poison stops the pipeline with a
// *RecordError wrapping ErrPoisonStorm. It catches storms that good records
// interleave (a key field only some record types lack). It costs window
// bytes per partition.
func DeadLetterMaxShare(share float64, window int) DeadLetterOpt {
	return deadLetterOpt(func(d *deadLetterConfig) { d.maxShare, d.window = share, window })
}

// Replays.

// CheckpointPrefix sets the prefix of a Replay's checkpoint keys (default
// DefaultReplayPrefix): prefix + id + ":" + topic + ":" + partition, and the
// stored plan at prefix + id + ":" + topic + ":plan".
func CheckpointPrefix(prefix string) ReplayOpt {
	return replayOpt(func(c *config) { c.replayPrefix = prefix })
}

// PlanGiven records how the caller described the replay's bounds (the
// command's flags, say) with the plan its first run stores, so a later run
// can tell by LoadPlan whether it was given the same ones. It costs nothing
// else.
func PlanGiven(desc string) ReplayOpt { return replayOpt(func(c *config) { c.replayGiven = desc }) }

// Observing a run.

// Logger sets the structured logger (default slog.Default()).
func Logger(l *slog.Logger) Opt { return opt(func(c *config) { c.logger = l }) }

// Observe registers fn for every Event. fn runs on the goroutine that caused
// the event and must not block. Default: none.
func Observe(fn func(Event)) Opt { return opt(func(c *config) { c.observer = fn }) }

// Measure sends the pipeline's timings to m. It costs a few calls of m per
// batch and one per applied record. Default: none.
func Measure(m Meter) Opt { return opt(func(c *config) { c.meter = m }) }

// Tracer traces every record with tp (OpenTelemetry). The consuming Kafka
// client gets franz-go's kotel hooks, which start a "<topic> receive" span
// per record as the child of the producer's span, read from the record's
// W3C traceparent and baggage headers. Each record then gets a
// "<topic> process" span under it, which lives until the record's effect
// lands and carries its outcome, and goes to the sink in
// sink.Record.Context: a sink.Ledger stores the span's IDs in the claim
// and starts its round trip's span under it (a redis client instrumented
// with go-redis's redisotel nests its commands there), an external effect
// (Guarded) runs in a "shardpipe.effect" span under it, and a record whose
// key an earlier traced record applied gets a link to that record's span.
// A record whose term ends before it lands leaves its span unended (the
// next term's delivery gets a new one). Default: none; a tp whose sampler
// drops a trace costs a few allocations per record.
func Tracer(tp trace.TracerProvider) Opt {
	return opt(func(c *config) {
		kt := kotel.NewTracer(kotel.TracerProvider(tp), kotel.TracerPropagator(
			propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})))
		c.tracer = kt
	})
}
