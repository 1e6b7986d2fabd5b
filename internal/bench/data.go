package bench

import (
	"strconv"
	"strings"
	"time"

	"github.com/shardpipe/shardpipe/internal/orders"
)

// Key returns the business key (and record key) of order i of a bench topic:
// the sink ceiling writes the same keys without reading Kafka.
func Key(i int) string { return "bench-ord-" + pad(i, 9) }

// value is order i's JSON (orders.Order), valueSize bytes: the fields of
// internal/orders, created_at to the second, and a note that pads it to the
// size of a real order.
func value(i int, at time.Time) []byte {
	o := orders.Order{OrderID: Key(i), Customer: "cust-" + pad(i%1000, 3),
		AmountCents: int64(100 + (i*7919)%99901), CreatedAt: at.UTC().Truncate(time.Second)}
	if n := valueSize - len(o.JSON()) - len(`,"note":""`); n > 0 {
		o.Note = strings.Repeat("x", n)
	}
	return o.JSON()
}

// valueSize is the length of every bench order value.
const valueSize = 200

func pad(i, width int) string {
	s := strconv.Itoa(i)
	for len(s) < width {
		s = "0" + s
	}
	return s
}
