package sink

import "errors"

// Sentinel errors. Every error the package returns wraps one of these (or a
// context or Redis error) with %w and names the record by topic, partition,
// offset and, when known, business key; test with errors.Is.
var (
	// ErrNoKey means a record has no usable business key: the key source
	// found nothing, an empty value, or a JSON value that is neither a string
	// nor a number. Such a record is never applied.
	ErrNoKey = errors.New("sink: no business key")

	// ErrBadValue means an effect could not read what it needs from a
	// record's value (not JSON, a field missing, an amount that is not an
	// integer). Such a record is neither claimed nor applied.
	ErrBadValue = errors.New("sink: bad record value")

	// ErrCrossSlot means, on Redis Cluster, that an effect's keys do not
	// hash to the same slot as the record's ledger key, so one script could
	// not touch them atomically. Such a record is neither claimed nor applied.
	ErrCrossSlot = errors.New("sink: effect keys and ledger key in different cluster slots")

	// ErrUnknown means Redis could not be reached or kept failing until the
	// retries ran out or the context ended: some or all effects of the call
	// may have landed. The caller must not commit past any of its records;
	// re-applying them later is safe.
	ErrUnknown = errors.New("sink: effects unknown")

	// ErrClaimBusy is what Guard.Do returns under a context made by
	// WithoutWaiting when another owner holds the key's claim pending:
	// nothing was claimed and the effect did not run.
	ErrClaimBusy = errors.New("sink: key claimed by another owner")

	// ErrLeaseLost means a Guard's effect ran but its pending claim had
	// expired (or been replaced) before it could be marked done: another
	// worker may run, or have run, the effect as well.
	ErrLeaseLost = errors.New("sink: guard lease lost")

	// ErrMisconfigured means Redis refused a command for a reason no retry
	// can fix and the record is not to blame: a key of the wrong type
	// (WRONGTYPE, a totals field that is not an integer), missing
	// permissions (NOPERM), a command the server does not know or accept
	// (Redis older than 7.0), a cluster redirection on a client that is not
	// a cluster client (MOVED, ASK). Nothing was written for the record;
	// the caller should stop rather than retry or skip.
	ErrMisconfigured = errors.New("sink: redis refused the command as configured")

	// ErrRejected is what an external effect wraps its error in when no
	// retry can succeed (an HTTP 4xx other than 408 and 429): the effect
	// did not happen. With pipeline.MaxInFlight the record is given up at
	// once (dead-lettered) instead of retried.
	ErrRejected = errors.New("sink: effect rejected the record")

	// ErrNotApplied is what an external effect wraps its error in when it
	// certainly did not happen although its context ended: nothing reached
	// the external system (the request was not sent, or not sent whole).
	// A Guard then releases the record's claim, as for any failure, instead
	// of keeping it pending as an effect that may have happened: the next
	// attempt runs the effect. Return it only when sure: an effect that
	// happened and is reported with it runs again (the idempotency key
	// absorbs that; nothing absorbs an effect taken as done that never ran).
	ErrNotApplied = errors.New("sink: effect not applied")

	// ErrUnavailable is what an external effect wraps its error in when the
	// system it writes to could not be used at all (a database that does
	// not answer, is restarting or is out of connections), so the failure
	// says nothing about the record: with pipeline.Guarded the record is
	// retried with the backoff until it lands or the term ends, and the
	// attempt is not counted against it (pipeline.EffectAttempts), as a
	// Redis that does not answer is not. Like any failure that is not an
	// unknown outcome, it releases the record's claim, so return it only
	// when the effect did not happen or running it again is harmless (an
	// inbox in the effect's own transaction, as pgeffect keeps).
	ErrUnavailable = errors.New("sink: effect's system unavailable")

	// ErrBadClaim means a ledger key holds a value that is not a claim
	// written by this package.
	ErrBadClaim = errors.New("sink: not a claim")

	// ErrClaimFormat means a ledger's manifest records claims of a newer
	// format than this package reads (Manifest.CheckFormat): a program
	// must not apply records through that ledger, since it would misread
	// the claims it finds.
	ErrClaimFormat = errors.New("sink: the ledger's claims are of a newer format")
)
