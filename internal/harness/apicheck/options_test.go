package apicheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// shipping are the library packages a user imports, from this package's
// directory: each keeps its options the way kgo keeps its own.
var shipping = []string{"admin", "checkpoint", "httpeffect", "metrics", "opshttp", "pgeffect", "pipeline", "secure", "sink"}

// TestOptionsInOneFile: in every shipping package, the option types (an
// exported type whose name ends in Opt) and every exported function that
// returns one are declared in options.go, and the unexported function that
// validates a package's options (a name starting "validate" with a
// receiver of the package's config) is declared at most once. A user reads
// one file to learn every knob of a package, and a reviewer one function to
// learn what is refused.
func TestOptionsInOneFile(t *testing.T) {
	for _, pkg := range shipping {
		dir := filepath.Join("..", "..", "..", pkg)
		fset := token.NewFileSet()
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Fatalf("%s: no Go files at %s: the package moved, update shipping", pkg, dir)
		}
		parsed := map[string]*ast.File{}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			parsed[filepath.Base(path)] = f
		}
		optTypes := map[string]string{} // option type -> file
		for name, f := range parsed {
			for _, ty := range optionTypes(f) {
				optTypes[ty] = name
			}
		}
		for ty, file := range optTypes {
			if file != "options.go" {
				t.Errorf("%s: option type %s is declared in %s, not options.go", pkg, ty, file)
			}
		}
		var validators []string
		for name, f := range parsed {
			for _, decl := range f.Decls {
				fd, ok := decl.(*ast.FuncDecl)
				if !ok {
					continue
				}
				if fd.Recv != nil && strings.HasPrefix(fd.Name.Name, "validate") && recvIsConfig(fd.Recv) {
					validators = append(validators, name+": "+fd.Name.Name)
				}
				if fd.Recv != nil || !fd.Name.IsExported() || fd.Type.Results == nil || len(fd.Type.Results.List) != 1 {
					continue
				}
				if res, ok := fd.Type.Results.List[0].Type.(*ast.Ident); ok && optTypes[res.Name] != "" && name != "options.go" {
					t.Errorf("%s: option %s (a %s) is declared in %s, not options.go", pkg, fd.Name.Name, res.Name, name)
				}
			}
		}
		sort.Strings(validators)
		if len(validators) > 1 {
			t.Errorf("%s: options are validated in %d places, want one: %s", pkg, len(validators), strings.Join(validators, "; "))
		}
	}
}

// optionTypes lists the exported types of f whose name ends in Opt.
func optionTypes(f *ast.File) []string {
	var out []string
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.TYPE {
			continue
		}
		for _, spec := range gd.Specs {
			ts := spec.(*ast.TypeSpec)
			if ts.Name.IsExported() && strings.HasSuffix(ts.Name.Name, "Opt") {
				out = append(out, ts.Name.Name)
			}
		}
	}
	return out
}

// recvIsConfig reports whether a method's receiver is a config type (its
// name ends in "config" or "Config").
func recvIsConfig(recv *ast.FieldList) bool {
	if len(recv.List) == 0 {
		return false
	}
	t := recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	id, ok := t.(*ast.Ident)
	return ok && strings.HasSuffix(strings.ToLower(id.Name), "config")
}
