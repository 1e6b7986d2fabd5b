package sink

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"
)

// Ledger is the record-mode sink: the ledger write (SET NX of prefix+key)
// is the effect, optionally together with an atomic Redis Effect. Each
// business key is applied at most once for as long as its claim lives
// (WithTTL), and exactly once if Redis keeps acknowledged writes (appendonly
// with appendfsync always; everysec may lose the last second on a crash of
// the host). A Ledger is safe for concurrent use.
type Ledger struct {
	c           redis.UniversalClient
	cfg         config
	batchScript *redis.Script // record mode on a single node: the batch claim script
	ttlArg      any           // the TTL in milliseconds, boxed once
	cluster     bool          // c is a *redis.ClusterClient
	single      bool          // c is a *redis.Client: one node, or one Sentinel-managed master
	scratches   sync.Pool     // *applyScratch
}

// NewLedger returns a Ledger writing through c, which may be a single,
// Sentinel (failover) or Cluster client. It does no I/O. On a cluster
// client with an effect it requires a hash-tagged prefix (see Totals).
func NewLedger(c redis.UniversalClient, opts ...LedgerOpt) (*Ledger, error) {
	if c == nil {
		return nil, errors.New("sink: NewLedger: nil client")
	}
	cfg, err := newConfig(false, opts)
	if err != nil {
		return nil, err
	}
	l := &Ledger{c: c, cfg: cfg, batchScript: newBatchScript(""), ttlArg: cfg.ttl.Milliseconds()}
	_, l.cluster = c.(*redis.ClusterClient)
	_, l.single = c.(*redis.Client)
	if cfg.effect != nil && !l.single && !l.cluster {
		return nil, fmt.Errorf("sink: NewLedger: an effect needs a single Redis, Sentinel or Cluster client (redis.NewUniversalClient gives one), not %T: its keys and the ledger key must be written in one script on one node", c)
	}
	if cfg.effect != nil {
		l.batchScript = newBatchScript(cfg.effect.Lua())
		if l.cluster && !hasHashTag(cfg.prefix) {
			return nil, fmt.Errorf("sink: NewLedger: prefix %q has no {hash tag}: on Redis Cluster an effect needs its keys in the ledger key's slot", cfg.prefix)
		}
	}
	return l, nil
}

// Apply performs the effect of every record of batch whose business key is
// not yet claimed, in ONE round trip (more only when retrying): one run of
// the batch claim script, atomic in Redis, or (on Redis Cluster without an
// effect, and on a client that routes by a command's first key, such as a
// Ring) one pipeline of two commands per key. It returns one Result per
// record, at the same index. Its cost on the client is per batch, not per
// record: the batch's keys and claims are encoded into a buffer reused
// across calls, and besides the results the call allocates about one
// object per five records.
//
// A record whose key cannot be extracted, or whose value the effect cannot
// read, gets Result.Err and is not claimed. Of several records with the
// same key in one batch the first is applied (or suppressed), the rest are
// suppressed; this is decided in Go, not by pipeline order.
//
// Counting rule (see Outcome): a record is Applied when the stored claim was
// written for it under its term (topic, partition, offset, group, epoch,
// member), by this call or by an earlier call of the same term whose reply
// was lost; Redelivered when the claim names the same topic, partition and
// offset under another term of its group (a replay after a crash, a lost
// reply or a rebalance); Suppressed when it names another record or group. So each key's effect happens
// once, and is Applied or Redelivered for exactly the one record it was
// applied from.
//
// Retryable Redis errors (network, timeouts, LOADING, READONLY,
// CLUSTERDOWN, TRYAGAIN, ...) are retried with the Backoff, resending only
// the records without an answer; this is safe because the claim is
// idempotent and recognised by the rule above. When attempts run out or
// ctx ends, Apply returns nil and an error wrapping ErrUnknown: any of the
// batch's effects may have landed, so the caller must not commit past the
// batch, and may apply it again.
func (l *Ledger) Apply(ctx context.Context, batch []Record) ([]Result, error) {
	results := make([]Result, len(batch))
	sc := l.scratch(len(batch))
	defer l.release(sc)
	todo, dups := l.prepareBatch(batch, results, sc)
	ctx, span := l.startSpan(ctx, batch, len(todo))
	err := l.send(ctx, batch, todo, sc)
	endSpan(span, err)
	if err != nil {
		return nil, err
	}
	for _, w := range todo {
		results[w.idx].Outcome, results[w.idx].Err, results[w.idx].Applier = w.outcome, w.err, w.applier
	}
	for i, j := range dups { // ranging over a nil map does nothing
		w := todo[j]
		results[i].Outcome = Suppressed
		if traced(&batch[i]) {
			results[i].Applier = w.applier
			if w.outcome == Applied && batch[w.idx].Context != nil {
				results[i].Applier = trace.SpanContextFromContext(batch[w.idx].Context)
			}
		}
		if w.err != nil {
			results[i].Err = fmt.Errorf("sink: %s key %s: same key as offset %d, which failed: %w",
				batch[i].at(), QuoteKey(results[i].Key), batch[w.idx].Offset, w.err)
		}
	}
	return results, nil
}

// prepareBatch fills results with the batch's keys and refusals and returns
// the writes to send, one per distinct business key, with their claims
// encoded, and the records whose key an earlier record of the batch has
// (record index -> index in todo). It does no I/O.
func (l *Ledger) prepareBatch(batch []Record, results []Result, sc *applyScratch) (todo []*write, dups map[int]int) {
	writes := sc.writes
	l.keysInto(batch, writes, results, sc)
	claims := claimTemplate{at: time.Now().UTC()}
	todo, first := sc.todo, sc.first // first: business key -> index of the write
	buf := sc.buf                    // claims are encoded here, after the keys
	for i := range batch {
		r, w := &batch[i], &writes[i]
		if results[i].Err != nil {
			continue
		}
		key := results[i].Key
		if l.cfg.effect != nil {
			if err := l.effectArgs(r, key, w); err != nil {
				results[i].Err = err
				continue
			}
		}
		if j, ok := first[key]; ok {
			if dups == nil {
				dups = map[int]int{}
			}
			dups[i] = j
			continue
		}
		w.off = len(buf)
		buf = claims.append(buf, r)
		w.end = len(buf)
		first[key] = len(todo)
		todo = append(todo, w)
	}
	sc.buf, sc.todo = buf, todo
	scripted := l.scripted()
	for _, w := range todo {
		w.claimBytes = buf[w.off:w.end]
		if !scripted {
			w.claim = string(w.claimBytes)
		}
	}
	return todo, dups
}

// keysInto extracts every record's business key into results[i].Key (or
// its refusal into results[i].Err) and its ledger key into writes[i].key,
// all as substrings of one string: one allocation for the batch's keys.
// So a Result.Key keeps the batch's keys in memory while it is held. The
// ledger keys' bytes stay in sc's buffer too (writes[i].keyBytes), which
// the batch's claims are then appended to.
func (l *Ledger) keysInto(batch []Record, writes []write, results []Result, sc *applyScratch) {
	buf := sc.buf[:0]
	for i := range batch {
		w := &writes[i]
		w.idx, w.off = i, len(buf)
		buf = append(buf, l.cfg.prefix...)
		var err error
		if buf, err = l.cfg.keys.appendKey(buf, &batch[i]); err != nil {
			results[i].Err = err
			buf = buf[:w.off]
		}
		w.end = len(buf)
	}
	keys := string(buf)
	sc.buf = buf
	p := len(l.cfg.prefix)
	for i := range writes {
		if w := &writes[i]; results[i].Err == nil {
			w.key, w.keyBytes = keys[w.off:w.end], buf[w.off:w.end]
			results[i].Key = keys[w.off+p : w.end]
		}
	}
}

// Lookup returns the claim stored for business key, if any (one GET, not
// retried). It is for status and replay tools.
func (l *Ledger) Lookup(ctx context.Context, key string) (Claim, bool, error) {
	return lookup(ctx, l.c, l.cfg.prefix+key)
}

// Key returns r's business key as the Ledger's key source reads it (no
// prefix), or an error wrapping ErrNoKey. It does no I/O.
func (l *Ledger) Key(r *Record) (string, error) { return l.cfg.keys.Extract(r) }

// prepare extracts r's business key into w (batch index i) and, with an
// effect, the effect's arguments. An error is the record's refusal: ErrNoKey
// or ErrBadValue (the key is returned when it was extracted). Apply and Check
// refuse the same records this way.
func (l *Ledger) prepare(r *Record, i int, w *write) (string, error) {
	key, err := l.cfg.keys.Extract(r)
	if err != nil {
		return "", err
	}
	w.idx, w.key = i, l.cfg.prefix+key
	if l.cfg.effect != nil {
		if err := l.effectArgs(r, key, w); err != nil {
			return key, err
		}
	}
	return key, nil
}

func (l *Ledger) effectArgs(r *Record, key string, w *write) error {
	keys, args, err := l.cfg.effect.Args(r, key)
	if err != nil {
		return fmt.Errorf("%w at %s key %s: %w", ErrBadValue, r.at(), QuoteKey(key), err)
	}
	if l.cluster {
		want := slot(w.key)
		for _, k := range keys {
			if slot(k) != want {
				return fmt.Errorf("%w at %s key %s: %s (slot %d) vs %s (slot %d)",
					ErrCrossSlot, r.at(), QuoteKey(key), QuoteKey(k), slot(k), QuoteKey(w.key), want)
			}
		}
	}
	w.ekeys, w.eargs = keys, args
	return nil
}

func lookup(ctx context.Context, c redis.UniversalClient, key string) (Claim, bool, error) {
	s, err := c.Get(ctx, key).Result()
	if errors.Is(err, redis.Nil) {
		return Claim{}, false, nil
	}
	if err != nil {
		return Claim{}, false, fmt.Errorf("sink: lookup %s: %w", QuoteKey(key), err)
	}
	c2, err := DecodeClaim(s)
	if err != nil {
		return Claim{}, false, fmt.Errorf("sink: lookup %s: %w", QuoteKey(key), err)
	}
	return c2, true, nil
}
