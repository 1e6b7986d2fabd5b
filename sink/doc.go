// Package sink makes the effects of Kafka records land exactly once in the
// face of crashes, rebalances, zombie consumers and replays, by keeping a
// Redis ledger of business keys.
//
// # Record mode: Ledger
//
// The ledger write is the effect. Ledger.Apply claims each record's
// business key with SET prefix+key claim NX (with an Effect such as Totals
// riding along the effect runs first in the same script, so the two land
// together or not at all), all of a batch in one round trip: one run of a
// batch claim script, which answers each key on its own (on Redis Cluster
// without an effect, where a batch's keys live in many slots, and on a
// Ring, two pipelined commands per key instead; an effect is refused on a
// Ring). A claimed key is Applied; a key
// already claimed is Suppressed, or Redelivered when the claim names the
// same record under another term of its group (see Outcome for the counting
// rule). The claim value (Claim) names the topic, partition, offset, group,
// epoch and member that applied it. Every record that meets a key, applied
// or not, renews it to at least the TTL from then (PEXPIRE GT). A key that
// holds anything but a claim of its key space refuses the record with
// ErrMisconfigured and ErrBadClaim: it is never taken for a duplicate.
//
// A key's effect happens exactly once while its claim lives (WithTTL) and
// Redis keeps acknowledged writes: use appendonly yes with appendfsync
// always for no loss, everysec to risk the last second on a host crash;
// asynchronous replication can lose recent writes on a failover.
//
// # Guard mode: Guard
//
// For effects outside Redis (an HTTP call, an e-mail), Guard.Do claims the
// key as pending with a lease, runs the caller's effect, and marks the
// claim done with the long TTL. A replay that finds done is suppressed; one
// that finds the pending claim expired (the first attempt died before
// finishing) runs the effect; one that finds a live claim of another owner
// waits for it. The lease is renewed while the effect runs, and the
// effect's context ends a fifth of the lease before the claim could lapse.
//
// Within one process an effect that ran is never run again for the same
// record and term: the Guard remembers, per record and term, its claim and
// whether the effect ran, so a retry after Redis failed the done write only
// marks the claim done. An effect that ended with its context, its outcome
// unknown, is run again (same key) by the retry or, once its lease lapses,
// by the next owner: never taken as done. When no retry will come (the record's partition moved,
// the process is stopping), Guard.Finish marks it done without running
// anything; it never writes over another owner's claim.
//
// One window remains: a process that stops after the effect but before done
// without marking it (a crash, a kill, Redis unreachable until its term's
// time is up). The lease then expires and the next owner runs the effect a
// second time. Close it by
// passing the business key (Do hands it to the effect) to the external
// system as its idempotency key, so that it drops the second call.
//
// # Errors
//
// Per-record problems (ErrNoKey, ErrBadValue, ErrCrossSlot, a WRONGTYPE
// reply) come back in Result.Err: that record's effect did not happen.
// Redis being unavailable is retried with a capped exponential Backoff;
// when that gives up, the call fails with ErrUnknown and the caller must not
// commit past the batch. Re-applying a batch is always safe.
//
// # Redis
//
// Every constructor takes a redis.UniversalClient, so one code path serves
// single, Sentinel and Cluster deployments. Record mode without an effect
// uses SET ... NX GET and so needs Redis 7.0 or newer; the scripts need 2.6.
// On Cluster, an Effect's keys must share the ledger key's slot (see Totals).
package sink
