package pipeline

import (
	"slices"
	"testing"
)

// TestOptionsBundle: Options applies its options in order, as if passed
// one by one, to New and NewReplay alike.
func TestOptionsBundle(t *testing.T) {
	shared := []Opt{Brokers("a:1"), MaxBatch(7), Brokers("b:2"), MaxBatch(9)}
	var one, each config
	Options(shared...).apply(&one)
	for _, o := range shared {
		o.apply(&each)
	}
	if !slices.Equal(one.brokers, []string{"a:1", "b:2"}) || one.maxBatch != 9 || one.maxBatch != each.maxBatch {
		t.Fatalf("Options gave brokers %v max batch %d; one by one gave %v %d", one.brokers, one.maxBatch, each.brokers, each.maxBatch)
	}
	var _ []GroupOpt = []GroupOpt{Topics("t"), Options(shared...)}
	var _ []ReplayOpt = []ReplayOpt{CheckpointPrefix("p:"), Options(shared...)}
}
