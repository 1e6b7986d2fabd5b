package chaos

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// faultKind is one thing the run does to a process.
type faultKind int

const (
	faultKill   faultKind = iota // SIGKILL a consumer, restart it after Down
	faultZombie                  // SIGSTOP a consumer past its session timeout, then SIGCONT
	faultRedis                   // SIGKILL Redis, restart it after Down (same AOF)
	faultBroker                  // stop the broker gracefully, start it again after Down
	// faultRedisOutage SIGKILLs Redis while guard-mode effects are in flight
	// (their replies held until Redis is gone) and keeps it down past the
	// sink's retry budget (GuardPass.RedisOutage), then restarts it.
	faultRedisOutage
	// faultPostgres stops the SQL pass's PostgreSQL at once (pg_ctl -m
	// immediate) while effects run, and starts it again after Down.
	faultPostgres
)

func (k faultKind) String() string {
	return [...]string{"kill", "zombie", "redis-crash", "broker-restart", "redis-outage", "postgres-restart"}[k]
}

// recordFaults, guardFaults and sqlFaults are each phase's faults besides
// the kills.
var (
	recordFaults = []faultKind{faultZombie, faultRedis, faultBroker}
	guardFaults  = []faultKind{faultZombie, faultRedisOutage}
	sqlFaults    = []faultKind{faultZombie, faultPostgres}
)

// step is one scheduled fault: wait Gap, then do Kind to Slot (a consumer),
// keeping the target down for Down.
type step struct {
	Gap  time.Duration
	Kind faultKind
	Slot int
	Down time.Duration
}

func (s step) String() string {
	return fmt.Sprintf("+%v %s slot=%d down=%v", s.Gap, s.Kind, s.Slot, s.Down)
}

// phaseSchedule is one phase's faults, from rng: one of each fixed kind
// (recordFaults or guardFaults) and kills kills, in a random order, each
// after a gap of 0.5 to 1.5 times gap. The same rng state gives the same
// schedule.
func phaseSchedule(rng *rand.Rand, consumers, kills int, gap time.Duration, fixed []faultKind) []step {
	kinds := append([]faultKind(nil), fixed...)
	for range kills {
		kinds = append(kinds, faultKill)
	}
	rng.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	steps := make([]step, len(kinds))
	for i, k := range kinds {
		s := step{Kind: k, Slot: rng.IntN(consumers), Gap: gap/2 + time.Duration(rng.Int64N(int64(gap)))}
		switch k {
		case faultKill:
			s.Down = time.Duration(rng.Int64N(int64(time.Second)))
		case faultRedis:
			s.Down = 500*time.Millisecond + time.Duration(rng.Int64N(int64(1500*time.Millisecond)))
		case faultBroker:
			s.Down = time.Duration(rng.Int64N(int64(2 * time.Second)))
		case faultPostgres:
			s.Down = 500*time.Millisecond + time.Duration(rng.Int64N(int64(1500*time.Millisecond)))
		}
		steps[i] = s.round()
	}
	return steps
}

func (s step) round() step {
	s.Gap, s.Down = s.Gap.Round(time.Millisecond), s.Down.Round(time.Millisecond)
	return s
}

// cost is about how long a step takes past its gap on a loaded machine, as
// measured in runs: the target's downtime, plus what the fault itself
// waits for (a broker stops and starts in about 12s).
func (r *runner) cost(s step) time.Duration {
	if r.cfg.Cluster != nil {
		switch s.Kind { // a failover, a broker restart and the readiness checks after them
		case faultRedis:
			return s.Down + 15*time.Second
		case faultBroker:
			return max(s.Down, 5*time.Second) + 15*time.Second
		case faultRedisOutage:
			return r.cfg.Guard.RedisOutage + 10*time.Second
		}
	}
	switch s.Kind {
	case faultKill:
		return s.Down + 500*time.Millisecond
	case faultZombie:
		return r.cfg.ZombiePause + time.Second
	case faultRedis:
		return s.Down + time.Second
	case faultBroker:
		return s.Down + 12*time.Second
	case faultRedisOutage:
		return r.cfg.Guard.RedisOutage + 3*time.Second
	case faultPostgres:
		return s.Down + 5*time.Second
	}
	return 0
}

// scheduleTime is about how long the phases take: 5s per phase to start
// (or switch) the consumers, the gaps and the steps, and a third more.
func (r *runner) scheduleTime(phases [][]step) time.Duration {
	var d time.Duration
	for _, steps := range phases {
		d += 5 * time.Second
		for _, s := range steps {
			d += s.Gap + r.cost(s)
		}
	}
	return d + d/3
}
