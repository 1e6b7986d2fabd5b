package checkpoint

import (
	"strconv"
	"testing"
)

// BenchmarkTracker compares, side by side, batches of records landing in
// order (the ledger's case: a batch's results come back in offset order)
// with landing in reverse, where every Land but the last searches the
// in-flight records and the fold happens at once at the end; for batches of
// 100 and 500. It reports the cost per record.
func BenchmarkTracker(b *testing.B) {
	p := Partition{Topic: "orders", Partition: 0}
	for _, size := range []int{100, 500} {
		for _, order := range []string{"in-order", "reverse"} {
			b.Run(order+"/batch="+strconv.Itoa(size), func(b *testing.B) {
				b.ReportAllocs()
				t := NewTracker(p, 0)
				next := int64(0)
				for b.Loop() {
					start := next
					for range size {
						if err := t.Start(next, 0); err != nil {
							b.Fatal(err)
						}
						next++
					}
					for i := range int64(size) {
						off := start + i
						if order == "reverse" {
							off = next - 1 - i
						}
						if err := t.Land(off); err != nil {
							b.Fatal(err)
						}
					}
					if t.CommitPoint() != next {
						b.Fatalf("commit point %d, want %d", t.CommitPoint(), next)
					}
					t.Committed(next)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*size), "ns/record")
			})
		}
	}
}
