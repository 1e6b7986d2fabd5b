package orders

// Summary is what exactly-once processing of the produced records must
// give: each order ID counted once (its first record), and per customer the
// sum of amount_cents over those first records.
type Summary struct {
	Topic      string           `json:"topic"`
	Seed       uint64           `json:"seed,omitempty"`
	Records    int              `json:"records"`
	Unique     int              `json:"unique"`
	Duplicates int              `json:"duplicates"`
	NoTotals   int              `json:"without_totals_fields,omitempty"`
	Totals     map[string]int64 `json:"totals"`
	TotalCents int64            `json:"total_cents"`
	Partitions map[int32]int    `json:"partitions"`

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
