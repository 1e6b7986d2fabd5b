package apicheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// flagRe matches a command-line flag in text: "--" and a lowercase name,
// at the start or after a space or an opening parenthesis.
var flagRe = regexp.MustCompile(`(^|[\s(])--[a-z][a-z0-9-]+`)

// TestLibrariesSpeakNoFlags: no string literal of a shipping package names
// a command-line flag. The libraries speak in their own terms (options,
// typed errors and fields); the command turns those into flags and
// sentences, so a library user never reads advice about a flag they do
// not have. Comments may mention the command.
func TestLibrariesSpeakNoFlags(t *testing.T) {
	for _, pkg := range shipping {
		files, err := filepath.Glob(filepath.Join("..", "..", "..", pkg, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Fatalf("%s: no Go files: the package moved, update shipping", pkg)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING && flagRe.MatchString(lit.Value) {
					t.Errorf("%s: %s names a command-line flag: say it in the library's terms and let the command word it",
						fset.Position(lit.Pos()), lit.Value)
				}
				return true
			})
		}
	}
}
