package shardpipe

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/shardpipe/shardpipe/"

// TestImportArrows checks the import rules of the code map (doc.go) on the
// module's packages and everything they import (go list -deps), and that
// the map names every package.
func TestImportArrows(t *testing.T) {
	deps := listDeps(t)
	banned := []string{"github.com/twmb/franz-go/pkg/kfake", "github.com/alicebob/miniredis", module + "internal/embedded",
		module + "integration", module + "cmd/"}
	tests := []struct {
		pkg    string
		banned []string // import path prefixes
	}{
		{"checkpoint", append([]string{module + "pipeline", module + "internal/faults/guardfault", module + "sink", module + "admin", module + "metrics", module + "httpeffect"}, banned...)},
		{"sink", append([]string{module + "pipeline", module + "checkpoint", module + "admin", module + "metrics", module + "httpeffect"}, banned...)},
		{"pipeline", append([]string{module + "admin", module + "metrics", module + "opshttp", module + "httpeffect", module + "pgeffect"}, banned...)},
		{"admin", append([]string{module + "metrics", module + "httpeffect"}, banned...)},
		{"metrics", append([]string{module + "admin", module + "opshttp", module + "httpeffect"}, banned...)},
		{"opshttp", append([]string{module + "admin", module + "httpeffect"}, banned...)},
		{"httpeffect", append([]string{module + "pipeline", module + "checkpoint", module + "admin", module + "metrics"}, banned...)},
		{"pgeffect", append([]string{module + "pipeline", module + "checkpoint", module + "admin", module + "metrics", module + "httpeffect"}, banned...)},
		// The flag groups configure the library; the command composes them.
		{"internal/settings", banned},
		{"internal/chaoscheck", []string{module}},
		{"secure", []string{module}},
		{"internal/faults/guardfault", []string{module}},
		{"internal/faults/commitfault", []string{module}},
		// The scenario engine runs in the demo and in users' programs: no
		// testing, no fakes, not the kit.
		{"integration/scenario", append([]string{"testing", module + "admin", module + "metrics", module + "httpeffect"}, banned...)},
	}
	for _, tt := range tests {
		t.Run(tt.pkg, func(t *testing.T) {
			ds, ok := deps[module+tt.pkg]
			if !ok {
				t.Fatalf("package %s not found", tt.pkg)
			}
			for _, d := range ds {
				for _, b := range tt.banned {
					if strings.HasPrefix(d, b) {
						t.Errorf("%s imports %s (directly or through another package)", tt.pkg, d)
					}
				}
			}
		})
	}
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	for p := range deps {
		if rel, ok := strings.CutPrefix(p, module); ok && !strings.Contains(string(doc), "//\t"+rel) && !strings.Contains(string(doc), ", "+rel) {
			t.Errorf("the code map in doc.go does not name package %s", rel)
		}
	}
}

// listDeps returns each package of the module with every package it
// imports, transitively, tests excluded.
func listDeps(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	m := map[string][]string{}
	for {
		var p struct {
			ImportPath string
			Deps       []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		m[p.ImportPath] = p.Deps
	}
	return m
}
