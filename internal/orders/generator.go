package orders

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// GenConfig says what NewGenerator makes.
type GenConfig struct {
	Count      int     // unique orders
	Duplicates float64 // re-sends, as a ratio of Count (0.1: 10% more records)
	Seed       uint64  // same seed, same orders in the same order
	Customers  int     // distinct customers (default 50)
}

// DuplicateCount is how many re-sends cfg makes: Count x Duplicates, rounded.
func (cfg GenConfig) DuplicateCount() int {
	if cfg.Count == 0 {
		return 0
	}
	return int(float64(cfg.Count)*cfg.Duplicates + 0.5)
}

// Generator yields Count unique orders with DuplicateCount re-sends of
// earlier orders (same order ID, same content) mixed in at random places.
type Generator struct {
	rng     *rand.Rand
	cfg     GenConfig
	dup     []bool // per position: a re-send
	pos     int
	emitted []Line
	base    time.Time
}

// NewGenerator returns a Generator for cfg.
func NewGenerator(cfg GenConfig) *Generator {
	if cfg.Customers <= 0 {
		cfg.Customers = 50
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x5eed))
	d := cfg.DuplicateCount()
	total := cfg.Count + d
	dup := make([]bool, total)
	if total > 1 {
		// Position 0 is always a new order; d of the rest are re-sends.
		for _, i := range rng.Perm(total - 1)[:d] {
			dup[i+1] = true
		}
	}
	return &Generator{rng: rng, cfg: cfg, dup: dup, base: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

// Total is the number of records Next yields.
func (g *Generator) Total() int { return len(g.dup) }

// Next returns the next record, whether it is a re-send, and false when done.
func (g *Generator) Next() (l Line, resend bool, ok bool) {
	if g.pos >= len(g.dup) {
		return Line{}, false, false
	}
	resend = g.dup[g.pos]
	g.pos++
	if resend {
		return g.emitted[g.rng.IntN(len(g.emitted))], true, true
	}
	n := len(g.emitted)
	o := Order{
		OrderID:     fmt.Sprintf("ord-%d-%07d", g.cfg.Seed, n),
		Customer:    fmt.Sprintf("cust-%03d", g.rng.IntN(g.cfg.Customers)),
		AmountCents: 100 + g.rng.Int64N(99_901),
		CreatedAt:   g.base.Add(time.Duration(n) * time.Second),
	}
	l = o.Encode()
	g.emitted = append(g.emitted, l)
	return l, false, true
}
