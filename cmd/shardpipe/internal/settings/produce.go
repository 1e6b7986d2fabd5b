package settings

import (
	"math/rand/v2"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/flagcheck"
	"github.com/shardpipe/shardpipe/internal/orders"
)

// Flag names of produce that other messages name.
const (
	FlagPartitions = "partitions"
	FlagDelivery   = "delivery-timeout"
	// FlagFromFile is produce's file of orders; it was --from, which is
	// replay's start (one variable, SHARDPIPE_FROM, meant both).
	FlagFromFile = "from-file"
	FlagSummary  = "summary-json"
)

const (
	fCount       = "count"
	fDuplicates  = "duplicates"
	fRate        = "rate"
	fReplication = "replication-factor"
	fSeed        = "seed"
)

// Produce is produce's settings: which orders to write, how fast, and the
// topic to create when it is missing.
type Produce struct {
	// Gen makes the synthetic orders; its Seed is never 0 (--seed 0 draws
	// one from 1 to 2^31).
	Gen orders.GenConfig
	// Rate is records per second (0: as fast as possible).
	Rate int
	// Partitions creates a missing topic with this many (0: it must exist).
	Partitions int32
	// Replication is a created topic's replication factor (-1: the
	// broker's default).
	Replication int16
	// From is the file of JSON lines to send instead of Gen ("-": stdin;
	// "": make orders).
	From string
	// Summary is where the expected result goes as JSON ("-": stdout; "":
	// nowhere).
	Summary string
	// Delivery is how long a record may wait for the brokers' acknowledgement.
	Delivery time.Duration
}

// ProduceGroup is produce's own flags, loaded into p.
func ProduceGroup(p *Produce) cliflags.Group {
	return cliflags.NewGroup(p.load,
		&cli.IntFlag{Name: fCount, Value: 1000, Usage: "unique synthetic orders"},
		&cli.FloatFlag{Name: fDuplicates, Value: 0, Usage: "re-sends of earlier orders, as a ratio of --count (0.1: 10% more records)"},
		&cli.IntFlag{Name: fRate, Value: 0, Usage: "records per second (0: as fast as possible)"},
		&cli.IntFlag{Name: FlagPartitions, Value: 0,
			Usage: "create the topic with this many partitions when it does not exist (0: it must exist)"},
		&cli.IntFlag{Name: fReplication, Value: -1, Usage: "replication factor of a created topic (-1: the broker's default)"},
		&cli.Uint64Flag{Name: fSeed, Value: 0, Usage: "seed of the synthetic orders (0: a random one, printed)"},
		&cli.StringFlag{Name: FlagFromFile, TakesFile: true,
			Usage: "read orders as JSON lines from FILE, or - for stdin, instead of making them"},
		&cli.StringFlag{Name: FlagSummary, TakesFile: true,
			Usage: "write the expected result (unique orders, totals per customer) as JSON to FILE, or - for stdout"},
		&cli.DurationFlag{Name: FlagDelivery, Value: 30 * time.Second,
			Usage: "how long a record may wait for the brokers' acknowledgement before produce fails (exit 1) instead of retrying"})
}

func (p *Produce) load(c *cli.Command, bad *cliflags.Problems) {
	p.From, p.Summary = c.String(FlagFromFile), c.String(FlagSummary)
	count := IntIn(c, bad, fCount, flagcheck.In(0, 1_000_000_000, ""))
	dups := FloatIn(c, bad, fDuplicates, flagcheck.In(0.0, 10, "a ratio of --count"))
	if p.From != "" && (c.IsSet(fCount) || c.IsSet(fDuplicates) || c.IsSet(fSeed)) {
		bad.Addf("%s: reads orders from a file; drop %s, %s and %s", ref(FlagFromFile), ref(fCount), ref(fDuplicates), ref(fSeed))
	}
	p.Rate = IntIn(c, bad, fRate, flagcheck.In(0, 10_000_000, "0: unlimited"))
	r := flagcheck.In(0, 100_000, "0: the topic must exist")
	if n := IntIn(c, bad, FlagPartitions, r); r.Check(n) == "" {
		p.Partitions = int32(n)
	}
	if n := c.Int(fReplication); n == 0 || n < -1 || n > 32767 {
		bad.Addf("%s %d: want -1 (the broker's default) or 1 to 32767", ref(fReplication), n)
	} else {
		p.Replication = int16(n)
	}
	p.Delivery = timeout(bad, c, FlagDelivery)
	seed := c.Uint64(fSeed)
	if seed == 0 {
		seed = rand.Uint64N(1<<31) + 1
	}
	p.Gen = orders.GenConfig{Count: count, Duplicates: dups, Seed: seed}
}
