package termui

import (
	"fmt"
	"io"
	"time"

	"github.com/shardpipe/shardpipe/internal/orders"
)

// ProduceSummary writes what produce sent, which took took: the seed of
// synthetic orders (when sum has one), then one line of records, unique
// orders, re-sends and the exactly-once totals.
func ProduceSummary(w io.Writer, sum orders.Summary, took time.Duration) {
	if sum.Seed != 0 {
		fmt.Fprintf(w, "produce: seed %d\n", sum.Seed)
	}
	fmt.Fprintf(w, "produce: %d records to %s in %v: %d unique orders, %d duplicates; exactly-once totals: %d customers, %d cents\n",
		sum.Records, sum.Topic, took.Round(time.Millisecond), sum.Unique, sum.Duplicates, len(sum.Totals), sum.TotalCents)
}
