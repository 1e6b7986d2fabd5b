package admin

import "errors"

// Sentinels to branch on with errors.Is. Each error a function of this
// package returns for a problem it found wraps exactly one of them.
var (
	// ErrUnreachable: a server did not answer a request, or failed it (no
	// connection, the context's deadline, an error reply to an admin
	// request). The error is an *UnreachableError.
	ErrUnreachable = errors.New("admin: server unreachable")
	// ErrTopicMissing: a topic (or dead-letter topic) does not exist.
	ErrTopicMissing = errors.New("admin: topic does not exist")
	// ErrGroupMissing: the consumer group does not exist.
	ErrGroupMissing = errors.New("admin: group does not exist")
	// ErrRedisVersion: the Redis server is older than 7.0 (the ledger uses
	// SET ... NX GET).
	ErrRedisVersion = errors.New("admin: redis version too old")
	// ErrClusterNode: a Redis Cluster node is addressed by a single-node
	// client, so writes to keys on other nodes fail with MOVED.
	ErrClusterNode = errors.New("admin: redis cluster node behind a single-node client")
	// ErrEviction: the ledger's Redis may evict keys (maxmemory-policy other
	// than noeviction), and a record whose key was evicted applies again.
	ErrEviction = errors.New("admin: redis may evict ledger keys")
	// ErrNoPersistence: the ledger's Redis persists nothing (appendonly no,
	// no save points): a restart forgets the ledger while offsets stay
	// committed past its effects.
	ErrNoPersistence = errors.New("admin: redis persists nothing")
	// ErrGroupActive: the group has members, so its offsets are not moved.
	ErrGroupActive = errors.New("admin: group has active members")
	// ErrExpired: records a re-read would meet are older than the ledger
	// TTL and their keys are not in the ledger: they would apply again.
	ErrExpired = errors.New("admin: records older than the ledger TTL lack ledger entries")
	// ErrLedgerMismatch: the ledger's manifest records other settings than
	// the ones given (another effect, totals hash or key space). The error
	// is a *LedgerMismatchError.
	ErrLedgerMismatch = errors.New("admin: ledger made with other settings")
	// ErrKeysCollide: two of the keys a pipeline writes in Redis can be
	// one key (the ledger prefix over the program's own keys, a totals
	// hash among them): one would be written over the other, or a
	// record's business key could name it. The error is a *KeysCollideError.
	ErrKeysCollide = errors.New("admin: redis keys collide")
)

// CheckError is one problem a check found on a server or topic: what is
// wrong, where, and how to fix it. Error gives one line.
type CheckError struct {
	// Server is where: "redis 127.0.0.1:6379", "kafka".
	Server string
	// Setting is what is wrong there: "maxmemory-policy", "appendonly",
	// "redis_version", "cluster_enabled", "topic", "dead-letter topic",
	// "group", "members".
	Setting string
	// Value is the setting's value there (a policy, a version, a topic or
	// group name, the members).
	Value string
	// Fix says what makes the check pass.
	Fix string
	// Err is the sentinel (ErrEviction, ErrTopicMissing, ...).
	Err error
	// Near are, for a topic or group that does not exist, the existing
	// ones whose names are closest to Value (a typo of one of them, most
	// likely), closest first; at most three, none when no name is close.
	Near []string

	msg string
}

// Error returns the problem, where, and the fix, as one line.
func (e *CheckError) Error() string { return e.msg }

// Unwrap returns the sentinel.
func (e *CheckError) Unwrap() error { return e.Err }

// UnreachableError is a request a server did not answer or failed.
type UnreachableError struct {
	// Server is "kafka", "redis ADDR" or "redis cluster ...".
	Server string
	// Request names what went unanswered: "PING", "INFO server",
	// "Metadata", "CONFIG GET"...
	Request string
	// Err is the cause; context.DeadlineExceeded when the caller's deadline
	// passed first.
	Err error

	msg string
}

// Error names the server, the request and the cause.
func (e *UnreachableError) Error() string {
	if e.msg == "" {
		return e.Server + ": " + e.Request + " failed: " + e.Err.Error()
	}
	return e.msg
}

// Unwrap returns ErrUnreachable and the cause.
func (e *UnreachableError) Unwrap() []error { return []error{ErrUnreachable, e.Err} }

func unreachable(server, request string, err error, msg string) *UnreachableError {
	return &UnreachableError{Server: server, Request: request, Err: err, msg: msg}
}
