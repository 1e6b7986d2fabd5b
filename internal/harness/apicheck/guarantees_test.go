package apicheck

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	testNameRe = regexp.MustCompile(`\bTest[A-Z][A-Za-z0-9_]*`)
	testFuncRe = regexp.MustCompile(`(?m)^func (Test[A-Z][A-Za-z0-9_]*)\(`)
)

// TestREADMEGuaranteesNameTests: every promise of docs/guarantees.md (each
// bullet) names at least one test, and every test it names exists in the
// repository. A promise with no test behind it is a bug in the docs.
func TestREADMEGuaranteesNameTests(t *testing.T) {
	const root = "../../.."
	b, err := os.ReadFile(filepath.Join(root, "docs", "guarantees.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := guaranteesSection(string(b))
	if section == "" {
		t.Fatal("docs/guarantees.md has no \"# Guarantees\" heading")
	}
	defined := testFuncs(t, root)
	bullets := bulletsOf(section)
	if len(bullets) < 10 {
		t.Fatalf("Guarantees has %d bullets; the section was not parsed", len(bullets))
	}
	for _, bl := range bullets {
		names := testNameRe.FindAllString(bl, -1)
		if len(names) == 0 {
			t.Errorf("Guarantees bullet names no test: %.120q", bl)
		}
		for _, n := range names {
			if !defined[n] {
				t.Errorf("Guarantees names %s, which is not a test in the repository: %.80q", n, bl)
			}
		}
	}
}

// guaranteesSection returns what docs/guarantees.md holds after its
// "# Guarantees" title: the page is the section.
func guaranteesSection(page string) string {
	const head = "# Guarantees\n"
	if !strings.HasPrefix(page, head) {
		return ""
	}
	return page[len(head):]
}

// bulletsOf returns each top-level list item of a Markdown section with its
// continuation lines, joined.
func bulletsOf(section string) []string {
	var out []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.Join(cur, " "))
			cur = nil
		}
	}
	for _, l := range strings.Split(section, "\n") {
		switch {
		case strings.HasPrefix(l, "- "):
			flush()
			cur = append(cur, strings.TrimSpace(l[2:]))
		case cur != nil && strings.HasPrefix(l, "  ") && strings.TrimSpace(l) != "":
			cur = append(cur, strings.TrimSpace(l))
		default:
			flush()
		}
	}
	flush()
	return out
}

// testFuncs returns the names of every Test function in the repository's
// _test.go files (examples/ included).
func testFuncs(t *testing.T, root string) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == ".cache") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range testFuncRe.FindAllStringSubmatch(string(b), -1) {
			names[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}
