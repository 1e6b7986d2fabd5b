package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/internal/orders"
)

// Flag names of produce (with fBrokers, fTopic, fConnectTimeout).
const (
	fCount       = "count"
	fDuplicates  = "duplicates"
	fRate        = "rate"
	fPartitions  = "partitions"
	fReplication = "replication-factor"
	fSeed        = "seed"
	fFrom        = "from"
	fSummaryJSON = "summary-json"
	fDelivery    = "delivery-timeout"
)

func produceCommand() *cli.Command {
	return &cli.Command{
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
		Flags: []cli.Flag{
			brokersFlag(),
			&cli.StringFlag{Name: fTopic, Sources: fromEnv(fTopic), Usage: "topic to write to (required)"},
			&cli.IntFlag{Name: fCount, Value: 1000, Sources: fromEnv(fCount), Usage: "unique synthetic orders"},
			&cli.Float64Flag{Name: fDuplicates, Value: 0, Sources: fromEnv(fDuplicates),
				Usage: "re-sends of earlier orders, as a ratio of --count (0.1: 10% more records)"},
			&cli.IntFlag{Name: fRate, Value: 0, Sources: fromEnv(fRate), Usage: "records per second (0: as fast as possible)"},
			&cli.IntFlag{Name: fPartitions, Value: 0, Sources: fromEnv(fPartitions),
				Usage: "create the topic with this many partitions when it does not exist (0: it must exist)"},
			&cli.IntFlag{Name: fReplication, Value: -1, Sources: fromEnv(fReplication),
				Usage: "replication factor of a created topic (-1: the broker's default)"},
			&cli.Uint64Flag{Name: fSeed, Value: 0, Sources: fromEnv(fSeed),
				Usage: "seed of the synthetic orders (0: a random one, printed)"},
			&cli.StringFlag{Name: fFrom, Sources: fromEnv(fFrom), TakesFile: true,
				Usage: "read orders as JSON lines from FILE, or - for stdin, instead of making them"},
			&cli.StringFlag{Name: fSummaryJSON, Sources: fromEnv(fSummaryJSON), TakesFile: true,
				Usage: "write the expected result (unique orders, totals per customer) as JSON to FILE, or - for stdout"},
			&cli.DurationFlag{Name: fDelivery, Value: 30 * time.Second, Sources: fromEnv(fDelivery),
				Usage: "how long a record may wait for the brokers' acknowledgement before produce fails (exit 1) instead of retrying"},
			connectTimeoutFlag(),
		},
		Action: produceAction,
	}
}

// produceConfig is produce's validated configuration.
type produceConfig struct {
	brokers     []string
	kafkaOpts   []kgo.Opt // TLS and SASL
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

func loadProduceConfig(c *cli.Command) (produceConfig, error) {
	var bad problems
	pc := produceConfig{brokers: brokerList(&bad, c.StringSlice(fBrokers)), topic: c.String(fTopic),
		from: c.String(fFrom), summary: c.String(fSummaryJSON)}
	pc.kafkaOpts = kafkaSecurity(c, &bad)
	if pc.topic == "" {
		bad.addf("%s: no topic given", flagRef(fTopic))
	} else if msg := topicProblem(pc.topic); msg != "" {
		bad.addf("%s %q: %s", flagRef(fTopic), pc.topic, msg)
	}
	count, dups := c.Int(fCount), c.Float64(fDuplicates)
	if count < 0 {
		bad.addf("%s %d: must be 0 or more", flagRef(fCount), count)
	}
	if dups < 0 || dups > 10 || dups != dups {
		bad.addf("%s %v: want a ratio from 0 to 10", flagRef(fDuplicates), dups)
	}
	if pc.from != "" && (c.IsSet(fCount) || c.IsSet(fDuplicates) || c.IsSet(fSeed)) {
		bad.addf("%s: reads orders from a file; drop %s, %s and %s", flagRef(fFrom), flagRef(fCount), flagRef(fDuplicates), flagRef(fSeed))
	}
	pc.rate = int(c.Int(fRate))
	if pc.rate < 0 {
		bad.addf("%s %d: must be 0 (unlimited) or more", flagRef(fRate), pc.rate)
	}
	if n := c.Int(fPartitions); n < 0 || n > 100000 {
		bad.addf("%s %d: want 0 (the topic must exist) to 100000", flagRef(fPartitions), n)
	} else {
		pc.partitions = int32(n)
	}
	if n := c.Int(fReplication); n == 0 || n < -1 || n > 32767 {
		bad.addf("%s %d: want -1 (broker default) or 1 or more", flagRef(fReplication), n)
	} else {
		pc.replication = int16(n)
	}
	pc.connect = positive(&bad, c, fConnectTimeout)
	pc.delivery = positive(&bad, c, fDelivery)
	seed := c.Uint64(fSeed)
	if seed == 0 {
		seed = rand.Uint64N(1<<31) + 1
	}
	pc.gen = orders.GenConfig{Count: int(count), Duplicates: dups, Seed: seed}
	if len(bad) > 0 {
		return pc, usageErr(bad...)
	}
	return pc, nil
}

func produceAction(ctx context.Context, c *cli.Command) error {
	pc, err := loadProduceConfig(c)
	if err != nil {
		return err
	}
	stderr := c.Root().ErrWriter
	next, total, closeSrc, err := pc.source(c.Root().Reader)
	if err != nil {
		return usageErr(err.Error())
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
	return writeSummary(pc.summary, c.Root().Writer, sum)
}
