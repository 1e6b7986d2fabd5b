package sink

import "github.com/redis/go-redis/v9"

// The Guard's scripts. Each touches one key, KEYS[1], the ledger key.
var (
	// guardClaimScript: ARGV[1] our pending claim, ARGV[2] lease ms, ARGV[3]
	// TTL ms. It returns 1 when the claim is ours: written now, or found
	// (a retry whose earlier reply was lost) and its lease started again, so
	// that the lease runs from no earlier than this call. Otherwise it
	// returns the claim there; a done claim is first renewed to at least the
	// TTL from now (PEXPIRE GT never shortens it), another owner's pending
	// claim keeps its lease.
	guardClaimScript = redis.NewScript(`local prior = redis.call('GET', KEYS[1])
if prior == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if prior then
  if string.find(prior, '"state":"done"', 1, true) then redis.call('PEXPIRE', KEYS[1], ARGV[3], 'GT') end
  return prior
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`)

	// guardDoneScript: ARGV[1] our pending claim, ARGV[2] done claim, ARGV[3]
	// TTL ms, ARGV[4] our owner field. Done is written over our own pending
	// or done claim (a retry whose first reply was lost) or over nothing (our
	// lease lapsed and nobody claimed since); never over another owner's
	// claim, which is returned instead. 1 means written.
	guardDoneScript = redis.NewScript(`local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[1] and not string.find(cur, ARGV[4], 1, true) then return cur end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1`)

	// guardReleaseScript: ARGV[1] our pending claim, deleted if still there.
	guardReleaseScript = redis.NewScript(`if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])`)

	// guardRenewScript: ARGV[1] our pending claim, ARGV[2] lease ms. It
	// starts the lease again and returns 1 while the claim is ours, else 0.
	guardRenewScript = redis.NewScript(`if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`)
)
