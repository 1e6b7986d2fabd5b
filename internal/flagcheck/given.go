package flagcheck

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// GivenRange describes replay's range flags as given, for the plan the
// first run of an id stores: a rerun continues the id only with the same
// description (a duration ago is kept as written, so the same command line
// matches; the partitions are sorted, once each). It keeps the words of the
// plans stored before --partitions was renamed --partition-ids, so that
// their reruns still match.
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
	return fmt.Sprintf("--from %s --to %s --partitions %s", strings.TrimSpace(from), to, ps)
}
