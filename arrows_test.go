package shardpipe

import (
	"encoding/json"
	"io"
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
	banned := []string{"github.com/twmb/franz-go/pkg/kfake", "github.com/alicebob/miniredis",
		module + "integration", module + "cmd/", module + "internal/harness"}
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
		{"cmd/shardpipe/internal/settings", []string{"github.com/twmb/franz-go/pkg/kfake", "github.com/alicebob/miniredis",
			module + "integration", module + "internal/harness"}},
		{"internal/harness/chaoscheck", []string{module}},
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
	for p, ds := range deps {
		if strings.HasPrefix(p, module+"internal/harness") {
			continue
		}
		for _, d := range ds {
			if strings.HasPrefix(d, module+"internal/harness") {
				t.Errorf("%s imports the test harness %s: only internal/harness may", p, d)
			}
		}
	}
}

// listDeps returns each package of the module with every package it
// imports, transitively, tests excluded.
func listDeps(t *testing.T) map[string][]string {
	deps, _ := listPackages(t)
	return deps
}

// listPackages returns each package of the module with every package it
// imports transitively (deps) and directly (imports), tests excluded.
func listPackages(t *testing.T) (deps, imports map[string][]string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	deps, imports = map[string][]string{}, map[string][]string{}
	for {
		var p struct {
			ImportPath string
			Deps       []string
			Imports    []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		deps[p.ImportPath], imports[p.ImportPath] = p.Deps, p.Imports
	}
	return deps, imports
}
