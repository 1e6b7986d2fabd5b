package sink

import "github.com/redis/go-redis/v9"

// ClaimScriptFor returns the script a Ledger with effect e sends once per
// record, EVALSHA in the batch's pipeline, with KEYS = [prefix+business
// key, e's keys...] and ARGV = [claim, TTL in milliseconds, e's args...]:
// it returns 1 when it claimed the key and ran the effect, else the claim
// already there. It is for measuring that script without a Ledger (the
// scripted ceiling of shardpipe bench); a Ledger makes its own. It costs
// one call of e.Lua and formatting the script.
func ClaimScriptFor(e Effect) *redis.Script { return claimScript(e.Lua()) }
