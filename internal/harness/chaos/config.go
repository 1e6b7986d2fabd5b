package chaos

import (
	"errors"
	"fmt"
	"io"
	"time"
)

// Config is one chaos run.
type Config struct {
	Services Services
	// Cluster, when set, replaces Services: the run is on a Redis Cluster
	// and a three-broker Kafka (`make chaos CLUSTER=1`).
	Cluster    *ClusterServices
	Bin        string // the shardpipe binary
	WorkDir    string // logs of every process
	Seed       uint64 // schedule, order contents and poison placement
	Orders     int    // unique orders
	Duplicates float64
	Partitions int
	Consumers  int
	Produce    time.Duration // how long production lasts (it runs during the faults)
	Protocols  []string      // group protocols, one phase each, in this order
	Kills      int           // consumer kills per phase
	FaultGap   time.Duration // mean pause between faults
	// SessionTimeout is the classic protocol's --session-timeout; the
	// consumer protocol's comes from the broker (6s in services.sh).
	SessionTimeout time.Duration
	ZombiePause    time.Duration // how long a zombie stays stopped: past every session timeout
	Poison         int           // poison records to inject (needs `run --on-poison dlq`); 0: none
	DrainTimeout   time.Duration // how long the group may take to commit everything at the end
	Out            io.Writer     // progress and the verdict
	// Guard is a second pass in guard mode; zero Orders: none. Production
	// must outlast its faults: the Redis outage needs effects in flight.
	Guard GuardPass
	// ReceiverBin is the chaos receiver binary (internal/harness/cmd/receiver);
	// needed for a guard pass.
	ReceiverBin string
	// RecordPass runs the record-mode pass (the fields above); false runs the
	// guard pass alone.
	RecordPass bool
	// SQL is the last pass, `run --effect sql`; zero Orders: none.
	SQL SQLPass
}

// SQLPass is the SQL pass: `shardpipe run --effect sql`, the odd slots with
// --max-in-flight 16 and the even ones in batches (one transaction per
// batch), inserting one row per order into a table without a unique constraint,
// on the run's own PostgreSQL (services.sh start postgres: fsync and
// synchronous_commit on), on a topic and group of its own, after the other
// passes. Its schedule per protocol: Kills consumer kills, one zombie
// pause and one immediate PostgreSQL restart (pg_ctl -m immediate: every
// connection cut, COMMITs in flight unanswered, crash recovery) while
// effects run; no poison records. The checker wants one row per order.
type SQLPass struct {
	Orders    int
	Produce   time.Duration
	Protocols []string
	Kills     int
}

// GuardPass is the guard-mode pass: `shardpipe run --effect http` against
// the chaos receiver, which records every call for the checker, on a topic
// and group of its own, on the same servers after the record-mode pass.
// Its schedule per protocol: Kills consumer kills, one zombie pause and one
// Redis outage; no poison records, no broker restart.
type GuardPass struct {
	Orders    int // unique orders; re-sends, partitions and consumers as in the record pass
	Produce   time.Duration
	Protocols []string
	Kills     int
	// RedisOutage is how long Redis stays down after the effects it
	// stranded were answered (the receiver holds the replies of the calls in
	// flight until Redis is gone): longer than the sink's retry budget
	// (sink's default Backoff: 10 attempts, about 9s at most), so their done
	// writes fail for good and the pipeline applies their batches again.
	RedisOutage time.Duration
}

// guardOutage is GuardPass.RedisOutage in Full and Short: the sink's retry
// budget (about 9s) and a margin.
const guardOutage = 14 * time.Second

// Full is `make chaos`: 100,000 orders with 10% re-sends into 12
// partitions over five minutes, both protocols, several kills each; then
// 20,000 in guard mode over two and a half. Production outlasts the faults,
// so that each has work to hit.
func Full() Config {
	return Config{Orders: 100_000, Duplicates: 0.1, Partitions: 12, Consumers: 3, Produce: 5 * time.Minute,
		Protocols: []string{"classic", "consumer"}, Kills: 18, FaultGap: 4 * time.Second,
		SessionTimeout: 6 * time.Second, ZombiePause: 10 * time.Second, Poison: 30, DrainTimeout: 3 * time.Minute,
		RecordPass: true,
		Guard: GuardPass{Orders: 20_000, Produce: 150 * time.Second, Protocols: []string{"classic", "consumer"}, Kills: 4,
			RedisOutage: guardOutage},
		SQL: SQLPass{Orders: 10_000, Produce: 90 * time.Second, Protocols: []string{"classic", "consumer"}, Kills: 4}}
}

// Short is the variant `make test` runs: 10,000 orders, one fault of each
// kind per protocol; then 2,000 orders in guard mode with the consumer
// protocol: one kill, one zombie pause, one Redis outage.
func Short() Config {
	c := Full()
	c.Orders, c.Produce, c.Kills, c.FaultGap, c.Poison = 10_000, 50*time.Second, 1, time.Second, 6
	c.Guard = GuardPass{Orders: 2_000, Produce: 40 * time.Second, Protocols: []string{"consumer"}, Kills: 1,
		RedisOutage: guardOutage}
	c.SQL = SQLPass{} // make chaos only: it needs PostgreSQL
	return c
}

// guardConfig is c for the guard pass: its orders, production time,
// protocols and kills, no poison.
func (c Config) guardConfig() Config {
	g := c
	g.Orders, g.Produce, g.Protocols, g.Kills, g.Poison = c.Guard.Orders, c.Guard.Produce, c.Guard.Protocols, c.Guard.Kills, 0
	return g
}

// sqlConfig is c for the SQL pass: its orders, production time, protocols
// and kills, no poison.
func (c Config) sqlConfig() Config {
	q := c
	q.Orders, q.Produce, q.Protocols, q.Kills, q.Poison = c.SQL.Orders, c.SQL.Produce, c.SQL.Protocols, c.SQL.Kills, 0
	return q
}

// DLQTopic is the dead-letter topic of topic, as `run` names it by default.
func DLQTopic(topic string) string { return topic + ".dlq" }

func (c Config) validate() error {
	errs := []error{c.validateServers()}
	if c.Bin == "" || c.WorkDir == "" || c.Out == nil {
		errs = append(errs, errors.New("chaos: Bin, WorkDir and Out are required"))
	}
	if c.Orders < 1 || c.Duplicates < 0 || c.Partitions < 1 || c.Consumers < 1 {
		errs = append(errs, fmt.Errorf("chaos: orders %d, duplicates %v, partitions %d, consumers %d: want orders, partitions and consumers >= 1, duplicates >= 0",
			c.Orders, c.Duplicates, c.Partitions, c.Consumers))
	}
	if len(c.Protocols) == 0 {
		errs = append(errs, errors.New("chaos: no group protocol"))
	}
	for _, p := range c.Protocols {
		if p != "classic" && p != "consumer" {
			errs = append(errs, fmt.Errorf("chaos: group protocol %q: want classic or consumer", p))
		}
	}
	if c.Produce <= 0 || c.FaultGap <= 0 || c.DrainTimeout <= 0 || c.Kills < 0 || c.Poison < 0 {
		errs = append(errs, errors.New("chaos: produce, fault gap and drain timeout must be positive; kills and poison 0 or more"))
	}
	if c.ZombiePause <= c.SessionTimeout {
		errs = append(errs, fmt.Errorf("chaos: zombie pause %v must exceed the session timeout %v", c.ZombiePause, c.SessionTimeout))
	}
	if !c.RecordPass && c.Guard.Orders == 0 && c.SQL.Orders == 0 {
		errs = append(errs, errors.New("chaos: no pass to run (no record pass, no guard or sql orders)"))
	}
	if q := c.SQL; q.Orders > 0 {
		if c.Cluster != nil {
			errs = append(errs, errors.New("chaos: the sql pass runs on the single servers, not -cluster"))
		}
		if q.Produce <= 0 || q.Kills < 0 || len(q.Protocols) == 0 {
			errs = append(errs, errors.New("chaos: sql pass: produce and protocols needed, kills 0 or more"))
		}
		for _, p := range q.Protocols {
			if p != "classic" && p != "consumer" {
				errs = append(errs, fmt.Errorf("chaos: sql pass group protocol %q: want classic or consumer", p))
			}
		}
	}
	if g := c.Guard; g.Orders > 0 {
		if c.ReceiverBin == "" {
			errs = append(errs, errors.New("chaos: a guard pass needs ReceiverBin"))
		}
		if g.Produce <= 0 || g.Kills < 0 || len(g.Protocols) == 0 || g.RedisOutage <= 0 {
			errs = append(errs, errors.New("chaos: guard pass: produce, outage and protocols needed, kills 0 or more"))
		}
		for _, p := range g.Protocols {
			if p != "classic" && p != "consumer" {
				errs = append(errs, fmt.Errorf("chaos: guard pass group protocol %q: want classic or consumer", p))
			}
		}
	}
	return errors.Join(errs...)
}
