package sink

// Effect is a Redis write that lands atomically with a record's claim: it
// runs inside the claim script, after the ledger key is found absent and
// before the claim is written, so it happens exactly when the claim does.
// It runs inside the Ledger's batch script (one EVALSHA per batch, every
// record's effect and claim in turn); its cost is its own Redis calls and
// Args.
type Effect interface {
	// Lua returns the body of a Lua function. In it KEYS and ARGV are the
	// effect's own keys and arguments from Args (KEYS[1] is its first key).
	// It must fail (redis.call raises) before it writes anything when it
	// cannot apply: Redis does not roll a script back, and a failure that
	// comes first leaves neither effect nor claim. Called once, by NewLedger.
	Lua() string
	// Args returns the effect's keys and arguments for record r with
	// business key key. An error means r's value is unusable: r gets a
	// Result.Err wrapping ErrBadValue, and nothing is written. On Redis
	// Cluster every key must hash to the ledger key's slot.
	Args(r *Record, key string) (keys []string, args []any, err error)
}
