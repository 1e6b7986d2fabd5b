package apicheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readmeMaxLines bounds README.md: it is the front page (the problem, the
// two commands, the walkthrough, a program, the map of docs/), and the
// rest lives in docs/.
const readmeMaxLines = 300

// TestREADMEShortAndMapsDocs: README.md stays within readmeMaxLines and
// links every page of docs/, so each page is reachable from the front
// page and none is an orphan.
func TestREADMEShortAndMapsDocs(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	if n := strings.Count(readme, "\n"); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, want at most %d: move the detail into a page of docs/", n, readmeMaxLines)
	}
	linked := map[string]bool{}
	for _, m := range mdLinkRe.FindAllStringSubmatch(readme, -1) {
		target, _, _ := strings.Cut(m[1], "#")
		linked[filepath.ToSlash(filepath.Clean(target))] = true
	}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatal("docs/ has no .md page")
	}
	for _, p := range pages {
		if rel := "docs/" + filepath.Base(p); !linked[rel] {
			t.Errorf("README.md does not link %s: add it to the map of the docs", rel)
		}
	}
}
