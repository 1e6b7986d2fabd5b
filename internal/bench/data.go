package bench

import (
	"strconv"
	"time"
)

// Key returns the business key (and record key) of order i of a bench topic:
// the sink ceiling writes the same keys without reading Kafka.
func Key(i int) string { return "bench-ord-" + pad(i, 9) }

// value is order i's JSON, about valueSize bytes: the fields of
// internal/orders plus a note that pads it to the size of a real order.
func value(i int, at time.Time) []byte {
	b := make([]byte, 0, valueSize+16)
	b = append(b, `{"order_id":"`...)
	b = append(b, Key(i)...)
	b = append(b, `","customer":"cust-`...)
	b = append(b, pad(i%1000, 3)...)
	b = append(b, `","amount_cents":`...)
	b = strconv.AppendInt(b, int64(100+(i*7919)%99901), 10)
	b = append(b, `,"created_at":"`...)
	b = at.UTC().AppendFormat(b, time.RFC3339)
	b = append(b, `","note":"`...)
	for len(b) < valueSize-2 {
		b = append(b, 'x')
	}
	return append(b, `"}`...)
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
