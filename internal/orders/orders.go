// Package orders makes the sample orders shardpipe produces, reads orders
// from JSON lines, and sums what exactly-once processing of them must give.
package orders

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Order is one sample order. Its JSON (AppendJSON, JSON, Encode) is the
// record value; OrderID is the record key and the business key.
type Order struct {
	// OrderID is the order's ID: the record key and the business key.
	OrderID string `json:"order_id"`
	// Customer names who pays; the totals effect sums AmountCents per
	// customer.
	Customer string `json:"customer"`
	// AmountCents is the order's amount in cents (an integer, so sums are
	// exact).
	AmountCents int64 `json:"amount_cents"`
	// CreatedAt is when the order was made, written in RFC 3339 with
	// nanoseconds; the zero time leaves the field out.
	CreatedAt time.Time `json:"created_at,omitzero"`
	// Note is free text, left out when empty; the bench pads its orders to
	// a fixed size with it.
	Note string `json:"note,omitempty"`
}

// ErrBadLine wraps a JSON line that is not an order.
var ErrBadLine = errors.New("orders: bad line")

// Line is one order as produced: its key and value bytes, and the fields the
// summary needs.
type Line struct {
	Key      string // the record key: the order ID
	Value    []byte // the record value: the order's JSON, as produced
	Customer string // the value's customer, set when HasTotals
	Amount   int64  // the value's amount_cents, in cents, set when HasTotals
	// HasTotals is false when the value lacks a customer or an integer
	// amount_cents (the totals effect cannot sum it).
	HasTotals bool
}

// Encode returns o as a Line: its JSON as the value (see JSON, which panics
// for a CreatedAt outside years 0..9999).
func (o Order) Encode() Line {
	return Line{Key: o.OrderID, Value: o.JSON(), Customer: o.Customer, Amount: o.AmountCents, HasTotals: true}
}

// ParseLine reads one JSON object with a non-empty order_id (a string or a
// number, kept as written). The value is kept verbatim.
func ParseLine(b []byte) (Line, error) {
	b = bytes.TrimSpace(b)
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return Line{}, fmt.Errorf("%w: not a JSON object: %w", ErrBadLine, err)
	}
	id, err := scalar(m["order_id"])
	if err != nil || id == "" {
		return Line{}, fmt.Errorf("%w: no order_id (a non-empty string or number)", ErrBadLine)
	}
	l := Line{Key: id, Value: append([]byte(nil), b...)}
	cust, cerr := scalar(m["customer"])
	amount, aerr := strconv.ParseInt(string(bytes.TrimSpace(m["amount_cents"])), 10, 64)
	if cerr == nil && cust != "" && aerr == nil {
		l.Customer, l.Amount, l.HasTotals = cust, amount, true
	}
	return l, nil
}

// scalar returns a JSON string's text or a number as written.
func scalar(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", errors.New("absent")
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return "", err
	}
	return n.String(), nil
}
