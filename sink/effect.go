package sink

import (
	"fmt"

	"github.com/redis/go-redis/v9"
)

// Effect is a Redis write that lands atomically with a record's claim: it
// runs inside the claim script, after the ledger key is found absent and
// before the claim is written, so it happens exactly when the claim does.
// It costs one EVALSHA per record instead of one SET, in the same pipelined
// round trip.
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

// claimScript returns the Ledger's script with an effect. KEYS[1] is the
// ledger key, ARGV[1] the claim, ARGV[2] its time to live in milliseconds;
// the rest belongs to the effect. It returns 1 when it claimed, else the
// claim already there, whose expiry it first moves to at least the TTL from
// now (PEXPIRE GT never shortens one): every record that meets a key keeps
// it for the TTL.
func claimScript(effectLua string) *redis.Script {
	return redis.NewScript(fmt.Sprintf(`local prior = redis.call('GET', KEYS[1])
if prior then
  redis.call('PEXPIRE', KEYS[1], ARGV[2], 'GT')
  return prior
end
if tonumber(ARGV[2]) < 1 then return redis.error_reply('ERR syntax error: claim TTL below 1ms') end
local function effect(KEYS, ARGV)
%s
end
effect({unpack(KEYS, 2)}, {unpack(ARGV, 3)})
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`, effectLua))
}
