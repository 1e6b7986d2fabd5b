// Package chaoscheck judges a chaos run of shardpipe from the outside: it
// reads the topic from its start, the dead-letter topic, the group's
// committed offsets and the Redis ledger, and says whether every order
// landed exactly once.
//
// Independence rule: this package imports only the standard library,
// franz-go (kgo, kadm) and go-redis. It must never import a
// github.com/shardpipe/shardpipe package, not even an internal one: a
// checker that shares the code it checks shares its bugs. It parses order
// JSON, ledger claims and DLQ headers itself, from the documented formats.
// TestIndependent fails the build's tests if an import sneaks in.
//
// What it verifies (Verify):
//   - every unique order ID of the topic has exactly one ledger key, whose
//     claim names a record of the topic holding that order ID (in guard
//     mode, a claim marked done);
//   - no ledger key under the prefix names an order the topic does not hold;
//   - the totals hash equals, per customer, the sum of amount_cents over
//     unique orders (re-sends carry identical content; a re-send that
//     differs is itself a violation);
//   - every poison record (empty key, a value that is not a JSON object, no
//     customer, or an amount_cents that is not an int64) is in the DLQ
//     exactly once and never in the ledger;
//   - every partition's committed offset equals its log end offset;
//   - no committed offset ever went backwards: in the group's commit log
//     (every commit, in order, read from Kafka's __consumer_offsets), and
//     while Watcher polled, and the Watcher did read the group's offsets (a
//     watch that saw nothing proves nothing). On a replicated offsets topic
//     a decrease the Watcher saw that the log does not hold is a stale read
//     (a new coordinator serves an older offset until its high watermark
//     catches up after a failover), counted apart;
//   - in guard mode (`run --effect http`, Config.CallLog): from the chaos
//     receiver's record of every call, each unique order's effect ran at
//     least once, every call names a record holding its key, and a key
//     ran again only when the process of its previous run was SIGKILLed
//     before it could mark the key done (the documented window, counted
//     apart); any other second run is a violation. The figures give the
//     runs per key.
package chaoscheck
