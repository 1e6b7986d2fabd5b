package flagcheck

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// GivenRange describes replay's range flags as given, for the plan the
// first run of an id stores: a rerun continues the id only with the same
// description (SameGiven; a duration ago is kept as written, so the same
// command line matches; the partitions are sorted, once each).
func GivenRange(from, to string, partitions []int32) string {
	to = strings.TrimSpace(to)
	if to == "" {
		to = "(end)"
	}
	ps := "(all)"
	if len(partitions) > 0 {
		sorted := slices.Sorted(slices.Values(partitions))
		strs := make([]string, 0, len(sorted))
		for _, p := range slices.Compact(sorted) {
			strs = append(strs, strconv.Itoa(int(p)))
		}
		ps = strings.Join(strs, ",")
	}
	return fmt.Sprintf("--from %s --to %s --%s %s", strings.TrimSpace(from), to, partitionIDs, ps)
}

const (
	partitionIDs = "partition-ids"
	// oldPartitions is the word of the plans stored before --partitions
	// was renamed --partition-ids.
	oldPartitions = " --partitions "
)

// CurrentGiven returns a stored plan's description (GivenRange) in the
// words of today's flags: a plan stored before --partitions was renamed
// --partition-ids names --partition-ids.
func CurrentGiven(stored string) string {
	return strings.Replace(stored, oldPartitions, " --"+partitionIDs+" ", 1)
}

// SameGiven reports whether a plan stored with the description stored
// was given the range flags this run describes as given (GivenRange),
// in today's words or those of a plan stored before the rename.
func SameGiven(stored, given string) bool { return CurrentGiven(stored) == given }
