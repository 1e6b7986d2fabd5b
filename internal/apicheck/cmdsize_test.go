package apicheck

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// cmdBudget is the most non-test lines cmd/shardpipe may hold: the command
// keeps flags, config, rendering and wiring; logic with results of its own
// goes into a package, where it is tested (issue 13, doc.go's code map).
const cmdBudget = 2500

// TestCmdStaysSmall: cmd/shardpipe's non-test Go files hold fewer than
// cmdBudget lines (counted as wc -l counts them). The message names the
// count and the biggest files, the first places to move logic out of.
func TestCmdStaysSmall(t *testing.T) {
	n, files := goLines(t, filepath.Join("..", "..", "cmd", "shardpipe"))
	if n >= cmdBudget {
		var big []string
		for _, f := range files[:min(5, len(files))] {
			big = append(big, fmt.Sprintf("%s %d", f.name, f.lines))
		}
		t.Errorf("cmd/shardpipe has %d non-test lines, want fewer than %d: move logic into a package (admin, internal/...) "+
			"and test it there; biggest files: %s", n, cmdBudget, strings.Join(big, ", "))
	}
}

type fileLines struct {
	name  string
	lines int
}

// goLines counts the lines of dir's non-test Go files; it returns the sum
// and the files, the biggest first.
func goLines(t *testing.T, dir string) (int, []fileLines) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	var n int
	var files []fileLines
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		c := bytes.Count(src, []byte("\n"))
		n += c
		files = append(files, fileLines{filepath.Base(p), c})
	}
	slices.SortFunc(files, func(a, b fileLines) int { return b.lines - a.lines })
	return n, files
}
