package bench

import (
	"strconv"
	"strings"
	"time"

	"github.com/shardpipe/shardpipe/internal/orders"
	"github.com/shardpipe/shardpipe/sink"
)

// Key returns the business key (and record key) of order i of a bench topic:
// the sink ceiling writes the same keys without reading Kafka.
func Key(i int) string { return string(appendKey(nil, i)) }

// value is order i's JSON (orders.Order), valueSize bytes: the fields of
// internal/orders, created_at to the second, and a note that pads it to the
// size of a real order.
func value(i int, at time.Time) []byte {
	o := orders.Order{OrderID: Key(i), Customer: customer(i), AmountCents: amount(i),
		CreatedAt: at.UTC().Truncate(time.Second)}
	if n := valueSize - len(o.JSON()) - len(`,"note":""`); n > 0 {
		o.Note = strings.Repeat("x", n)
	}
	return o.JSON()
}

// customer and amount are order i's group and amount for the totals
// effect: the scripted ceiling passes them without reading Kafka.
func customer(i int) string { return "cust-" + pad(i%1000, 3) }
func amount(i int) int64    { return int64(100 + (i*7919)%99901) }

// totals is the totals effect of modes e and j, its hash under prefix.
func totals(prefix string) sink.Totals {
	return sink.Totals{Hash: prefix + "totals", GroupField: "customer", AmountField: "amount_cents"}
}

// valueSize is the length of every bench order value.
const valueSize = 200

// appendKey appends Key(i) to b.
func appendKey(b []byte, i int) []byte {
	return appendPadded(append(b, "bench-ord-"...), i, 9)
}

// appendPadded appends i in decimal, zero-padded to width.
func appendPadded(b []byte, i, width int) []byte {
	var digits [20]byte
	d := strconv.AppendInt(digits[:0], int64(i), 10)
	for n := len(d); n < width; n++ {
		b = append(b, '0')
	}
	return append(b, d...)
}

// pad is i in decimal, zero-padded to width.
func pad(i, width int) string { return string(appendPadded(nil, i, width)) }
