// Package checkpoint decides when and where a partition's consumed offset may
// move, and moves it.
//
// It holds three pieces, kept apart so that the rules can be tested without
// servers:
//
//   - The commit rules (Decide): an offset is committed under a fencing epoch.
//     Committing the same offset again is an idempotent no-op; a lower epoch is
//     refused with ErrStaleEpoch; a lower offset inside the same epoch is
//     refused with ErrStaleOffset. A higher epoch starts a new term and may set
//     any offset.
//   - The Tracker: which records of one partition have had their effects land.
//     Its commit point is the offset after the highest record below which
//     every effect has landed, so nothing past an unknown effect is committed.
//   - The Policy: commit every N landed records and at most T after the first
//     uncommitted one.
//
// Stores apply the rules to durable state: Kafka (group offsets through
// franz-go, fenced locally by the assignment's epoch as well), Redis (an
// atomic compare-and-set of epoch and offset in one Lua script, for runs
// outside a consumer group such as replays) and Memory (for tests).
package checkpoint
