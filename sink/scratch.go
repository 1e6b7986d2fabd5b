package sink

// applyScratch is what one Apply works in: the buffer its keys and claims
// are encoded in, its writes, the writes it sends and the index of their
// business keys. A Ledger reuses them across calls (a sync.Pool), so a
// batch costs no allocation for them once the pool is warm.
type applyScratch struct {
	buf    []byte
	writes []write
	todo   []*write
	first  map[string]int
	args   []any // the batch script's command
}

// maxKeptScratch is the largest buffer a scratch keeps for the next batch;
// a larger one (a huge batch) is left to the garbage collector.
const maxKeptScratch = 1 << 20

// scratch returns a cleared scratch for a batch of n records.
func (l *Ledger) scratch(n int) *applyScratch {
	sc, _ := l.scratches.Get().(*applyScratch)
	if sc == nil {
		sc = &applyScratch{first: make(map[string]int, n)}
	}
	if cap(sc.writes) < n {
		sc.writes = make([]write, n)
	}
	sc.writes = sc.writes[:n]
	if cap(sc.todo) < n {
		sc.todo = make([]*write, 0, n)
	}
	return sc
}

// release clears sc, so that it holds nothing of the batch, and keeps it.
// The batch's command is done with by then: go-redis keeps no argument
// after the call returns.
func (l *Ledger) release(sc *applyScratch) {
	clear(sc.writes)
	clear(sc.todo)
	sc.todo = sc.todo[:0]
	clear(sc.first)
	clear(sc.args)
	sc.args = sc.args[:0]
	if cap(sc.buf) > maxKeptScratch {
		sc.buf = nil
	}
	l.scratches.Put(sc)
}
