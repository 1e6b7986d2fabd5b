// Package typo finds the names closest to a mistyped one, by edit
// distance: the "did you mean" of an unknown command, flag or variable
// (cmd/shardpipe/internal/cliflags) and of a topic or group that does not exist (admin).
// It imports no shardpipe package.
package typo

import (
	"cmp"
	"slices"
	"strings"
)

// Suggest returns the candidate closest to name when it is close enough to
// be a typo (at most a third of its letters edited, transpositions counting
// once, or name a prefix of it), else "". Case is ignored.
func Suggest(name string, candidates []string) string {
	best, bestD := "", len(name)/3+1
	for _, c := range candidates {
		d := Distance(strings.ToLower(name), strings.ToLower(c))
		if d < bestD || (best == "" && len(name) >= 2 && strings.HasPrefix(c, name)) {
			best, bestD = c, d
		}
	}
	return best
}

// Closest returns at most n candidates close enough to name to be what a
// typo of it meant (as Suggest judges; name itself left out), closest
// first, ties in the order given. It costs one Distance per candidate.
func Closest(name string, candidates []string, n int) []string {
	type near struct {
		name string
		d    int
	}
	var out []near
	limit := len(name)/3 + 1
	for _, c := range candidates {
		if c == name {
			continue
		}
		d := Distance(strings.ToLower(name), strings.ToLower(c))
		if d < limit || len(name) >= 2 && strings.HasPrefix(c, name) {
			out = append(out, near{c, d})
		}
	}
	slices.SortStableFunc(out, func(a, b near) int { return cmp.Compare(a.d, b.d) })
	names := make([]string, 0, min(n, len(out)))
	for _, c := range out[:min(n, len(out))] {
		names = append(names, c.name)
	}
	return names
}

// Distance is the optimal string alignment distance of a and b:
// insertions, deletions, substitutions and adjacent transpositions, each
// counting one. It costs O(len(a) * len(b)) time and memory.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
