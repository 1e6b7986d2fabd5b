package shardpipe

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestCodeMap holds doc.go's code map true: it names every package of the
// module once, and each entry's "imports:" line states exactly the module
// packages the package imports directly, tests excluded (go list): an
// arrow the code does not have, or one it has that the map omits, fails.
func TestCodeMap(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	stated, err := parseCodeMap(string(src))
	if err != nil {
		t.Fatal(err)
	}
	_, imports := listPackages(t)
	for p, ims := range imports {
		rel, ok := strings.CutPrefix(p, module)
		if !ok {
			continue // the root package: the map itself
		}
		want, ok := stated[rel]
		if !ok {
			t.Errorf("the code map in doc.go has no entry for package %s", rel)
			continue
		}
		var have []string
		for _, im := range ims {
			if r, ok := strings.CutPrefix(im, module); ok {
				have = append(have, r)
			}
		}
		for _, w := range want {
			if !slices.Contains(have, w) {
				t.Errorf("doc.go states %s imports %s; it does not (imports: %s)", rel, w, list(have))
			}
		}
		for _, h := range have {
			if !slices.Contains(want, h) {
				t.Errorf("doc.go omits %s's import of %s (imports: %s)", rel, h, list(have))
			}
		}
	}
	for rel := range stated {
		if _, ok := imports[module+rel]; !ok {
			t.Errorf("doc.go's code map names %s, which is no package of the module", rel)
		}
	}
}

func list(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// parseCodeMap reads the entries of doc.go's code map: a package path on a
// line of its own in a code block ("//\t" and the path), then its lines,
// the last of them "imports: a, b" (or "imports: none"), which may go on
// over the entry's following lines.
func parseCodeMap(src string) (map[string][]string, error) {
	entries := map[string][]string{}
	stated := map[string]bool{} // entries with an imports line
	var cur string
	var inImports bool
	for _, line := range strings.Split(src, "\n") {
		text, ok := strings.CutPrefix(line, "//\t")
		if !ok {
			cur, inImports = "", false
			continue
		}
		if !strings.HasPrefix(text, " ") {
			name := strings.TrimSpace(text)
			if _, dup := entries[name]; dup {
				return nil, fmt.Errorf("doc.go: package %s has two entries", name)
			}
			cur, inImports = name, false
			entries[cur] = nil
			continue
		}
		text = strings.TrimSpace(text)
		if rest, ok := strings.CutPrefix(text, "imports:"); ok {
			inImports, text = true, rest
		} else if !inImports {
			continue
		}
		if cur == "" {
			return nil, fmt.Errorf("doc.go: %q outside an entry", line)
		}
		stated[cur] = true
		for _, p := range strings.Split(text, ",") {
			if p = strings.TrimSpace(p); p != "" && p != "none" {
				entries[cur] = append(entries[cur], p)
			}
		}
	}
	for name := range entries {
		if !stated[name] {
			return nil, fmt.Errorf("doc.go: entry %s has no imports line (write imports: none when it has none)", name)
		}
	}
	return entries, nil
}
