package orders

import (
	"encoding/json"
	"io"
	"os"
)

// Summary is what exactly-once processing of the produced records must
// give: each order ID counted once (its first record), and per customer the
// sum of amount_cents over those first records.
type Summary struct {
	Topic      string           `json:"topic"`                           // the topic produced to
	Seed       uint64           `json:"seed,omitempty"`                  // the generator's seed (left out for orders read from a file)
	Records    int              `json:"records"`                         // records produced, re-sends included
	Unique     int              `json:"unique"`                          // distinct order IDs
	Duplicates int              `json:"duplicates"`                      // records whose order ID came before
	NoTotals   int              `json:"without_totals_fields,omitempty"` // unique orders without customer or integer amount_cents
	Totals     map[string]int64 `json:"totals"`                          // per customer, the sum of amount_cents (cents) over unique orders
	TotalCents int64            `json:"total_cents"`                     // the sum of Totals, in cents
	Partitions map[int32]int    `json:"partitions"`                      // records produced per partition

	seen map[string]struct{}
}

// Add counts one record produced to partition.
func (s *Summary) Add(l Line, partition int32) {
	if s.seen == nil {
		s.seen = make(map[string]struct{})
		s.Totals = make(map[string]int64)
		s.Partitions = make(map[int32]int)
	}
	s.Records++
	s.Partitions[partition]++
	if _, ok := s.seen[l.Key]; ok {
		s.Duplicates++
		return
	}
	s.seen[l.Key] = struct{}{}
	s.Unique++
	if !l.HasTotals {
		s.NoTotals++
		return
	}
	s.Totals[l.Customer] += l.Amount
	s.TotalCents += l.Amount
}

// WriteJSON writes s as indented JSON to path ("-": stdout; "": nowhere).
func (s Summary) WriteJSON(path string, stdout io.Writer) error {
	if path == "" {
		return nil
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if path == "-" {
		_, err = stdout.Write(b)
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
