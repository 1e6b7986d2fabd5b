package sink_test

import (
	"context"
	"fmt"
	"log"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/sink"
)

func ExampleLedger_Apply() {
	m := miniredis.NewMiniRedis()
	if err := m.Start(); err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	c := redis.NewClient(&redis.Options{Addr: m.Addr()})
	defer c.Close()

	l, err := sink.NewLedger(c)
	if err != nil {
		log.Fatal(err)
	}
	batch := []sink.Record{
		{Topic: "orders", Partition: 0, Offset: 0, Epoch: 1, Key: []byte("order-1")},
		{Topic: "orders", Partition: 0, Offset: 1, Epoch: 1, Key: []byte("order-2")},
		{Topic: "orders", Partition: 0, Offset: 2, Epoch: 1, Key: []byte("order-1")}, // a duplicate
		{Topic: "orders", Partition: 0, Offset: 3, Epoch: 1},                         // no key
	}
	results, err := l.Apply(context.Background(), batch)
	if err != nil {
		log.Fatal(err) // effects unknown: do not commit past this batch
	}
	for i, r := range results {
		if r.Err != nil {
			fmt.Printf("offset %d: error\n", batch[i].Offset)
			continue
		}
		fmt.Printf("offset %d: %s %s\n", batch[i].Offset, r.Key, r.Outcome)
	}
	claim, _, _ := l.Lookup(context.Background(), "order-1")
	fmt.Printf("order-1 applied by %s/%d@%d epoch %d\n", claim.Topic, claim.Partition, claim.Offset, claim.Epoch)
	// Output:
	// offset 0: order-1 applied
	// offset 1: order-2 applied
	// offset 2: order-1 suppressed
	// offset 3: error
	// order-1 applied by orders/0@0 epoch 1
}

func ExampleTotals() {
	m := miniredis.NewMiniRedis()
	if err := m.Start(); err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	c := redis.NewClient(&redis.Options{Addr: m.Addr()})
	defer c.Close()

	keys, err := sink.ParseKeySource("json:order_id")
	if err != nil {
		log.Fatal(err)
	}
	l, err := sink.NewLedger(c,
		sink.WithPrefix("{orders}:"), // a hash tag: ledger and hash share a Redis Cluster slot
		sink.WithKeySource(keys),
		sink.WithEffect(sink.Totals{Hash: "{orders}:totals", GroupField: "customer", AmountField: "amount_cents"}))
	if err != nil {
		log.Fatal(err)
	}
	rec := func(off int64, v string) sink.Record {
		return sink.Record{Topic: "orders", Offset: off, Epoch: 1, Value: []byte(v)}
	}
	ctx := context.Background()
	batch := []sink.Record{
		rec(0, `{"order_id":"o1","customer":"alice","amount_cents":1250}`),
		rec(1, `{"order_id":"o2","customer":"alice","amount_cents":300}`),
		rec(2, `{"order_id":"o3","customer":"bob","amount_cents":99}`),
	}
	if _, err := l.Apply(ctx, batch); err != nil {
		log.Fatal(err)
	}
	for i := range batch { // a replay after a crash, under a new epoch
		batch[i].Epoch = 2
	}
	results, err := l.Apply(ctx, batch)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("replay:", results[0].Outcome, results[1].Outcome, results[2].Outcome)
	totals, _ := c.HGetAll(ctx, "{orders}:totals").Result()
	fmt.Println("alice", totals["alice"], "bob", totals["bob"])
	// Output:
	// replay: redelivered redelivered redelivered
	// alice 1550 bob 99
}

func ExampleGuard_Do() {
	m := miniredis.NewMiniRedis()
	if err := m.Start(); err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	c := redis.NewClient(&redis.Options{Addr: m.Addr()})
	defer c.Close()

	g, err := sink.NewGuard(c)
	if err != nil {
		log.Fatal(err)
	}
	charge := func(ctx context.Context, key string) error {
		// Pass key to the payment provider as its idempotency key: that
		// closes the window of a crash after this call and before done.
		fmt.Println("charging", key)
		return nil
	}
	r := sink.Record{Topic: "orders", Offset: 7, Epoch: 1, Key: []byte("order-7")}
	out, err := g.Do(context.Background(), &r, charge)
	fmt.Println(out, err)
	r.Epoch = 2 // replayed after a rebalance
	out, err = g.Do(context.Background(), &r, charge)
	fmt.Println(out, err)
	// Output:
	// charging order-7
	// applied <nil>
	// redelivered <nil>
}

func ExampleParseKeySource() {
	ks, err := sink.ParseKeySource("header:order-id")
	if err != nil {
		log.Fatal(err)
	}
	key, err := ks.Extract(&sink.Record{Headers: []sink.Header{{Key: "order-id", Value: []byte("o-42")}}})
	fmt.Println(ks, key, err)
	_, err = ks.Extract(&sink.Record{Topic: "orders", Partition: 1, Offset: 5})
	fmt.Println(err)
	_, err = sink.ParseKeySource("xml:id")
	fmt.Println(err)
	// Output:
	// header:order-id o-42 <nil>
	// sink: no business key at orders/1@5: no header "order-id"
	// sink: key source "xml:id": want "key", "header:NAME" or "json:FIELD"
}
