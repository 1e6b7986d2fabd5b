package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/internal/orders"
	"github.com/shardpipe/shardpipe/internal/produce"
)

// Flag names of produce (besides the shared ones).
const (
	fCount       = "count"
	fDuplicates  = "duplicates"
	fPartitions  = "partitions"
	fReplication = "replication-factor"
	fSeed        = "seed"
	fFrom        = "from"
	fSummaryJSON = "summary-json"
	fDelivery    = "delivery-timeout"
)

func produceCommand() *cli.Command {
	return cliflags.Command(env, &cli.Command{
		Name:  "produce",
		Usage: "write orders as JSON, keyed by order_id, with Kafka's default partitioner",
		UsageText: `shardpipe produce --topic orders [--count N --duplicates R --rate N --seed N | --from FILE|-]

Examples:
   # 10,000 synthetic orders and 1,000 re-sends of earlier ones; create the topic with 4 partitions
   shardpipe produce --topic orders --partitions 4 --count 10000 --duplicates 0.1 --seed 42

   # what exactly-once processing must give, as JSON (unique orders, totals per customer)
   shardpipe produce --topic orders --count 1000 --summary-json expected.json

   # orders from JSON lines, one object per line with an order_id
   shardpipe produce --topic orders --from orders.jsonl
   cat orders.jsonl | shardpipe produce --topic orders --from -`,
		Description: "Synthetic orders are {order_id, customer, amount_cents, created_at}. --count is the number\n" +
			"of unique orders; --duplicates adds count x ratio re-sends of earlier orders (same order_id, same\n" +
			"content). The same --seed gives the same records. Records are keyed by order_id, so the\n" +
			"default partitioner (murmur2, as Kafka's Java client) puts an order on the same partition\n" +
			"every time. A progress bar on a terminal, a plain line every second otherwise. A record the\n" +
			"brokers have not acknowledged within --delivery-timeout fails the run (exit 1). SIGINT or\n" +
			"SIGTERM stops after waiting for what was sent; a second one kills at once.",
	}, produceAction)
}

// produceConfig is produce's validated configuration.
type produceConfig struct {
	kafkaConn
	topic       string
	gen         orders.GenConfig
	rate        int
	partitions  int32
	replication int16
	from        string
	summary     string
	connect     time.Duration
	delivery    time.Duration
}

func (pc *produceConfig) Groups() []cliflags.Group {
	return []cliflags.Group{kafkaGroup(&pc.kafkaConn), topicGroup(&pc.topic, "topic to write to"), cliflags.NewGroup(pc.load,
		&cli.IntFlag{Name: fCount, Value: 1000, Usage: "unique synthetic orders"},
		&cli.FloatFlag{Name: fDuplicates, Value: 0, Usage: "re-sends of earlier orders, as a ratio of --count (0.1: 10% more records)"},
		&cli.IntFlag{Name: fRate, Value: 0, Usage: "records per second (0: as fast as possible)"},
		&cli.IntFlag{Name: fPartitions, Value: 0,
			Usage: "create the topic with this many partitions when it does not exist (0: it must exist)"},
		&cli.IntFlag{Name: fReplication, Value: -1, Usage: "replication factor of a created topic (-1: the broker's default)"},
		&cli.Uint64Flag{Name: fSeed, Value: 0, Usage: "seed of the synthetic orders (0: a random one, printed)"},
		&cli.StringFlag{Name: fFrom, TakesFile: true,
			Usage: "read orders as JSON lines from FILE, or - for stdin, instead of making them"},
		&cli.StringFlag{Name: fSummaryJSON, TakesFile: true,
			Usage: "write the expected result (unique orders, totals per customer) as JSON to FILE, or - for stdout"},
		&cli.DurationFlag{Name: fDelivery, Value: 30 * time.Second,
			Usage: "how long a record may wait for the brokers' acknowledgement before produce fails (exit 1) instead of retrying"}),
		connectGroup(&pc.connect, waitBrokers)}
}

func (pc *produceConfig) load(c *cli.Command, bad *cliflags.Problems) {
	pc.from, pc.summary = c.String(fFrom), c.String(fSummaryJSON)
	count, dups := c.Int(fCount), c.Float(fDuplicates)
	if count < 0 {
		bad.Addf("%s %d: must be 0 or more", flagRef(fCount), count)
	}
	if dups < 0 || dups > 10 || dups != dups {
		bad.Addf("%s %v: want a ratio from 0 to 10", flagRef(fDuplicates), dups)
	}
	if pc.from != "" && (c.IsSet(fCount) || c.IsSet(fDuplicates) || c.IsSet(fSeed)) {
		bad.Addf("%s: reads orders from a file; drop %s, %s and %s", flagRef(fFrom), flagRef(fCount), flagRef(fDuplicates), flagRef(fSeed))
	}
	if pc.rate = c.Int(fRate); pc.rate < 0 {
		bad.Addf("%s %d: must be 0 (unlimited) or more", flagRef(fRate), pc.rate)
	}
	if n := c.Int(fPartitions); n < 0 || n > 100000 {
		bad.Addf("%s %d: want 0 (the topic must exist) to 100000", flagRef(fPartitions), n)
	} else {
		pc.partitions = int32(n)
	}
	if n := c.Int(fReplication); n == 0 || n < -1 || n > 32767 {
		bad.Addf("%s %d: want -1 (broker default) or 1 or more", flagRef(fReplication), n)
	} else {
		pc.replication = int16(n)
	}
	pc.delivery = positive(bad, c, fDelivery)
	seed := c.Uint64(fSeed)
	if seed == 0 {
		seed = rand.Uint64N(1<<31) + 1
	}
	pc.gen = orders.GenConfig{Count: count, Duplicates: dups, Seed: seed}
}

func produceAction(ctx context.Context, c *cli.Command, pc *produceConfig) error {
	stderr := c.Root().ErrWriter
	next, total, closeSrc, err := produce.Open(pc.from, pc.gen, c.Root().Reader)
	if err != nil {
		return usageErr(fmt.Sprintf("%s: %v", flagRef(fFrom), err))
	}
	defer closeSrc()
	if err := ensureTopic(ctx, pc, stderr); err != nil {
		return err
	}
	ctx, stop := untilSignal(ctx)
	defer stop()
	start := time.Now()
	sum, err := sendAll(ctx, pc, next, total, stderr, stop)
	if err != nil {
		return err
	}
	sum.Topic = pc.topic
	if pc.from == "" {
		sum.Seed = pc.gen.Seed
		fmt.Fprintf(stderr, "produce: seed %d\n", pc.gen.Seed)
	}
	fmt.Fprintf(stderr, "produce: %d records to %s in %v: %d unique orders, %d duplicates; exactly-once totals: %d customers, %d cents\n",
		sum.Records, pc.topic, time.Since(start).Round(time.Millisecond), sum.Unique, sum.Duplicates, len(sum.Totals), sum.TotalCents)
	if err := sum.WriteJSON(pc.summary, c.Root().Writer); err != nil {
		return failure(fmt.Errorf("%s: %w", flagRef(fSummaryJSON), err))
	}
	return nil
}
