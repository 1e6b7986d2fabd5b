// Package orderhandler is a sample user of shardpipe: an order handler that
// charges customers, tested with shardpipe's integration kit the way a team
// would test its own handler (see handler_test.go). It is its own Go module
// and imports shardpipe like any other dependency.
package orderhandler

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/shardpipe/shardpipe/sink"
)

// Order is the record value the handler reads.
type Order struct {
	OrderID     string `json:"order_id"`
	Customer    string `json:"customer"`
	AmountCents int64  `json:"amount_cents"`
}

// Biller charges orders. In production Charge would call a payment service
// with the business key as its idempotency key; here it keeps the charges in
// memory so a test can read them back.
type Biller struct {
	mu      sync.Mutex
	charges map[string]int // order ID -> times charged
	owed    map[string]int64
}

// NewBiller returns a Biller with nothing charged.
func NewBiller() *Biller {
	return &Biller{charges: map[string]int{}, owed: map[string]int64{}}
}

// Charge is the pipeline effect (a pipeline.ExternalEffect): it charges the
// order's customer. A value that is not an order is a bad record
// (sink.ErrBadValue), handed to the pipeline's bad-record policy instead of
// being retried.
func (b *Biller) Charge(_ context.Context, key string, r *sink.Record) error {
	var o Order
	if err := json.Unmarshal(r.Value, &o); err != nil || o.Customer == "" {
		return fmt.Errorf("%w: order %s is not an order with a customer", sink.ErrBadValue, key)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.charges[key]++
	b.owed[o.Customer] += o.AmountCents
	return nil
}

// Charged returns how many times each order was charged.
func (b *Biller) Charged() map[string]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string]int, len(b.charges))
	for k, v := range b.charges {
		out[k] = v
	}
	return out
}
