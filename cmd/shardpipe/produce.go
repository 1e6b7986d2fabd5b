package main

import (
	"context"
	"fmt"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/produce"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/settings"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/termui"
)

// Flag names of produce that other commands' messages name.
const (
	fPartitions = settings.FlagPartitions
	fDelivery   = settings.FlagDelivery
)

func produceCommand() *cli.Command {
	return cliflags.Command(env, &cli.Command{
		Name:  "produce",
		Usage: "write orders as JSON, keyed by order_id, with Kafka's default partitioner",
		UsageText: `shardpipe produce --topic orders [--count N --duplicates R --rate N --seed N | --from-file FILE|-]

Examples:
   # 10,000 synthetic orders and 1,000 re-sends of earlier ones; create the topic with 4 partitions
   shardpipe produce --topic orders --partitions 4 --count 10000 --duplicates 0.1 --seed 42

   # what exactly-once processing must give, as JSON (unique orders, totals per customer)
   shardpipe produce --topic orders --count 1000 --summary-json expected.json

   # orders from JSON lines, one object per line with an order_id
   shardpipe produce --topic orders --from-file orders.jsonl
   cat orders.jsonl | shardpipe produce --topic orders --from-file -`,
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
	topic string
	settings.Produce
	connect time.Duration
}

func (pc *produceConfig) Groups() []cliflags.Group {
	return []cliflags.Group{kafkaGroup(&pc.kafkaConn), topicGroup(&pc.topic, "topic to write to"), settings.ProduceGroup(&pc.Produce),
		connectGroup(&pc.connect, waitBrokers)}
}

func produceAction(ctx context.Context, c *cli.Command, pc *produceConfig) error {
	stderr := c.Root().ErrWriter
	next, total, closeSrc, err := produce.Open(pc.From, pc.Gen, c.Root().Reader)
	if err != nil {
		return usageErr(fmt.Sprintf("%s: %v", flagRef(settings.FlagFromFile), err))
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
	if pc.From == "" {
		sum.Seed = pc.Gen.Seed
	}
	termui.ProduceSummary(stderr, sum, time.Since(start))
	if err := sum.WriteJSON(pc.Summary, c.Root().Writer); err != nil {
		return failure(fmt.Errorf("%s: %w", flagRef(settings.FlagSummary), err))
	}
	return nil
}
