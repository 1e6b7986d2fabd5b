package sink

import (
	"context"
	"fmt"
	"slices"

	"github.com/redis/go-redis/v9"
)

// batchClaimLua claims a whole batch in record mode: KEYS are the ledger
// keys, ARGV[1] the time to live in milliseconds and ARGV[1+i] the claim
// for KEYS[i]. Per key it does what the per-key pipeline does (SET NX GET
// PX, and PEXPIRE GT of a key already there, so that every record meeting
// a key keeps it for the TTL; inside a script the clock stands still, so
// the order does not matter). It answers only for the keys it did not
// claim, as pairs: the key's index, then the claim already there or the
// error of that key alone (redis.pcall: a WRONGTYPE key fails itself, not
// the batch). A batch of new keys gets an empty answer.
const batchClaimLua = `local ttl = ARGV[1]
if tonumber(ttl) < 1 then return redis.error_reply('ERR syntax error: claim TTL below 1ms') end
local out = {}
for i = 1, #KEYS do
  local prior = redis.pcall('SET', KEYS[i], ARGV[i + 1], 'NX', 'GET', 'PX', ttl)
  if prior then
    if type(prior) ~= 'table' then redis.pcall('PEXPIRE', KEYS[i], ttl, 'GT') end
    out[#out + 1] = i
    out[#out + 1] = prior
  end
end
return out
`

// batchEffectLua is batchClaimLua with an effect (%s: the effect's Lua,
// the body of a function of its own KEYS and ARGV). KEYS are, per record,
// the ledger key then the effect's keys; ARGV[1] is the TTL in
// milliseconds, ARGV[2] the number of records, then per record the number
// of effect keys, the number of effect arguments, the claim, and the
// effect's arguments. Per record: a key found is renewed (PEXPIRE GT) and
// its claim answered; otherwise the effect runs and then the claim is
// written. It answers as batchClaimLua does, only for records it did not
// claim. Everything that can fail for one record (unpacking its keys and
// arguments, its effect, its claim's SET) is caught, so it fails that
// record alone and the script goes on with the next. An effect that
// fails (it must fail before it writes) fails its record alone: pcall, and
// no claim.
const batchEffectLua = `local ttl = ARGV[1]
local function effect(KEYS, ARGV)
%s
end
local function run(k, nk, a, na)
  effect({unpack(KEYS, k + 1, k + nk)}, {unpack(ARGV, a + 3, a + 2 + na)})
end
local out = {}
local k, a = 1, 3
for i = 1, tonumber(ARGV[2]) do
  local nk, na = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
  local key, claim = KEYS[k], ARGV[a + 2]
  local answer = redis.pcall('GET', key)
  if answer then
    if type(answer) ~= 'table' then redis.pcall('PEXPIRE', key, ttl, 'GT') end
  elseif tonumber(ttl) < 1 then
    answer = redis.error_reply('ERR syntax error: claim TTL below 1ms')
  else
    local ok, err = pcall(run, k, nk, a, na)
    if ok then
      answer = redis.pcall('SET', key, claim, 'PX', ttl)
      if type(answer) ~= 'table' or not answer.err then answer = nil end
    elseif type(err) == 'table' and err.err then
      answer = err
    else
      answer = redis.error_reply(tostring(err))
    end
  end
  if answer then
    out[#out + 1] = i
    out[#out + 1] = answer
  end
  k, a = k + 1 + nk, a + 3 + na
end
return out
`

// scripted reports whether pending goes to Redis as one run of the batch
// claim script: on a single node (or a Sentinel-managed one), and on Redis
// Cluster with an effect (its keys share the ledger prefix's hash tag, so
// one slot). On Redis Cluster the record-mode batch's keys live in many
// slots, and any other client (a Ring, an AutoPipeliner) routes a command
// by its first key, so there each key gets its own commands (pipe).
func (l *Ledger) scripted() bool {
	return l.single || (l.cfg.effect != nil && l.cluster)
}

// roundTripScript claims pending in one EVALSHA of the Ledger's batch
// script (batchClaimLua, or batchEffectLua with an effect; loaded and sent
// again when Redis answers NOSCRIPT) and records each answer. Its cost per
// record is its arguments, written from what the batch already holds
// (pointers: no allocation per record); the reply names only the keys not
// claimed (index, then the claim found or the key's error). An error for
// the whole command (a connection lost, a final reply) is every key's
// answer.
func (l *Ledger) roundTripScript(ctx context.Context, batch []Record, pending []*write, sc *applyScratch) error {
	args := l.scriptArgs(sc.args[:0], pending)
	sc.args = args
	cmd := l.c.Do(ctx, args...)
	if err := cmd.Err(); err != nil && isNoScriptErr(err) {
		if err := l.batchScript.Load(ctx, l.c).Err(); err != nil {
			return fmt.Errorf("load claim script: %w", err)
		}
		cmd = l.c.Do(ctx, args...)
	}
	var scratch []byte
	var batchErr error
	if err := cmd.Err(); err != nil {
		// No per-key answer: the whole batch met err (a final reply
		// rejects every key alike; anything else leaves them unknown).
		for _, w := range pending {
			if e := l.settle(batch, w, "", false, err, &scratch); e != nil && batchErr == nil {
				batchErr = e
			}
		}
		return batchErr
	}
	replies, ok := cmd.Val().([]any)
	if !ok || len(replies)%2 != 0 || len(replies) > 2*len(pending) {
		return fmt.Errorf("claim script answered %T of %d for %d keys", cmd.Val(), len(replies), len(pending))
	}
	answered := 0 // pending[:answered] are settled
	settle := func(upTo int, prior string, claimed bool, err error) {
		for ; answered < upTo; answered++ { // not named: claimed
			l.settle(batch, pending[answered], "", true, nil, &scratch)
		}
		if upTo < len(pending) {
			if e := l.settle(batch, pending[upTo], prior, claimed, err, &scratch); e != nil && batchErr == nil {
				batchErr = e
			}
			answered = upTo + 1
		}
	}
	for j := 0; j < len(replies); j += 2 {
		i, ok := replies[j].(int64)
		if !ok || int(i) <= answered || int(i) > len(pending) {
			return fmt.Errorf("claim script answered index %v after %d of %d keys", replies[j], answered, len(pending))
		}
		prior, err := scriptAnswer(replies[j+1])
		settle(int(i)-1, prior, false, err)
	}
	settle(len(pending), "", true, nil)
	return batchErr
}

// scriptArgs appends to args the EVALSHA of the batch claim script for pending, in the
// layout batchClaimLua or batchEffectLua reads. Keys and claims are passed
// as pointers into the writes (no allocation per record); an effect's
// arguments as Args returned them.
func (l *Ledger) scriptArgs(args []any, pending []*write) []any {
	if l.cfg.effect == nil {
		args = slices.Grow(args, 4+2*len(pending))
		args = append(args, "evalsha", l.batchScript.Hash(), len(pending))
		for _, w := range pending {
			args = append(args, (*keyArg)(w))
		}
		args = append(args, l.ttlArg)
		for _, w := range pending {
			args = append(args, (*claimArg)(w))
		}
		return args
	}
	keys, size := 0, 5
	for _, w := range pending {
		keys += 1 + len(w.ekeys)
		size += 4 + len(w.ekeys) + 3 + len(w.eargs)
	}
	args = slices.Grow(args, size)
	args = append(args, "evalsha", l.batchScript.Hash(), keys)
	for _, w := range pending {
		args = append(args, (*keyArg)(w))
		for j := range w.ekeys {
			args = append(args, &w.ekeys[j])
		}
	}
	args = append(args, l.ttlArg, len(pending))
	for _, w := range pending {
		args = append(args, len(w.ekeys), len(w.eargs), (*claimArg)(w))
		args = append(args, w.eargs...)
	}
	return args
}

// keyArg is a write as the batch script's key argument: go-redis writes the
// ledger key, and prints it (String) where it shows a command (tracing
// hooks, errors) or routes one by its first key (Redis Cluster).
type keyArg write

// MarshalBinary returns the ledger key's bytes.
func (a *keyArg) MarshalBinary() ([]byte, error) { return a.keyBytes, nil }

// String returns the ledger key.
func (a *keyArg) String() string { return a.key }

// claimArg is a write as an argument of the batch claim script: go-redis
// writes its claim's bytes (encoding.BinaryMarshaler) with no copy into a
// string, and a pointer in an interface costs no allocation.
type claimArg write

// MarshalBinary returns the claim's bytes.
func (a *claimArg) MarshalBinary() ([]byte, error) { return a.claimBytes, nil }

// String returns the claim, for hooks that print commands.
func (a *claimArg) String() string { return string(a.claimBytes) }

// scriptAnswer reads the answer for a key the batch script did not claim:
// the claim already there, or the key's error.
func scriptAnswer(v any) (prior string, err error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case error:
		return "", v
	}
	return "", fmt.Errorf("claim script: unexpected answer %T", v)
}

// newBatchScript is the Ledger's batch claim script, with effect (the
// effect's Lua) or, for "", without one.
func newBatchScript(effect string) *redis.Script {
	if effect == "" {
		return redis.NewScript(batchClaimLua)
	}
	return redis.NewScript(fmt.Sprintf(batchEffectLua, effect))
}
