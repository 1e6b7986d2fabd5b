package apicheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// libraries are the packages whose API the tests check, from this
// package's directory.
var libraries = []string{"../../../pipeline", "../../../sink", "../../../checkpoint"}

// faultNames are the fault-injection seams that left the public API for
// internal/faults: none may come back as an exported name.
var faultNames = map[string]bool{"Hooks": true, "WithHooks": true, "CrashAfter": true, "ErrInjectedCrash": true,
	"Crashed": true, "BeforeApply": true, "AfterClaim": true, "AfterEffect": true}

// TestExportedNamesDocumented: every exported name of pipeline, sink and
// checkpoint, every exported method and every exported struct field or
// interface method has a doc comment (a trailing comment counts for a field
// or a constant), and no exported name is a fault-injection seam.
func TestExportedNamesDocumented(t *testing.T) {
	for _, dir := range libraries {
		fset := token.NewFileSet()
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			for _, miss := range undocumented(f) {
				t.Errorf("%s: %s", fset.Position(miss.pos), miss.what)
			}
		}
	}
}

type missing struct {
	pos  token.Pos
	what string
}

// undocumented lists f's exported names without a doc comment, and its
// exported fault seams.
func undocumented(f *ast.File) []missing {
	var out []missing
	add := func(pos token.Pos, format string, name string) {
		out = append(out, missing{pos, strings.ReplaceAll(format, "%s", name)})
	}
	check := func(id *ast.Ident, doc ...*ast.CommentGroup) {
		if !id.IsExported() {
			return
		}
		if faultNames[id.Name] {
			add(id.Pos(), "%s is a fault-injection seam: it belongs in internal/faults", id.Name)
		}
		for _, d := range doc {
			if d != nil && strings.TrimSpace(d.Text()) != "" {
				return
			}
		}
		add(id.Pos(), "%s has no doc comment", id.Name)
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Recv != nil && !exportedRecv(d.Recv) {
				continue
			}
			check(d.Name, d.Doc)
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					groupDoc := d.Doc
					if len(d.Specs) > 1 {
						groupDoc = nil
					}
					check(s.Name, s.Doc, groupDoc, s.Comment)
					if s.Name.IsExported() {
						out = append(out, members(s.Type)...)
					}
				case *ast.ValueSpec:
					groupDoc := d.Doc
					if len(d.Specs) > 1 {
						groupDoc = nil
					}
					for _, n := range s.Names {
						check(n, s.Doc, groupDoc, s.Comment)
					}
				}
			}
		}
	}
	return out
}

// members lists the undocumented exported fields of a struct type and
// methods of an interface type.
func members(t ast.Expr) []missing {
	var fields *ast.FieldList
	kind := "field"
	switch x := t.(type) {
	case *ast.StructType:
		fields = x.Fields
	case *ast.InterfaceType:
		fields, kind = x.Methods, "method"
	default:
		return nil
	}
	var out []missing
	for _, fl := range fields.List {
		documented := fl.Doc != nil && strings.TrimSpace(fl.Doc.Text()) != "" ||
			fl.Comment != nil && strings.TrimSpace(fl.Comment.Text()) != ""
		for _, n := range fl.Names {
			if faultNames[n.Name] && n.IsExported() {
				out = append(out, missing{n.Pos(), n.Name + " is a fault-injection seam: it belongs in internal/faults"})
			}
			if n.IsExported() && !documented {
				out = append(out, missing{n.Pos(), kind + " " + n.Name + " has no doc comment"})
			}
		}
	}
	return out
}

func exportedRecv(recv *ast.FieldList) bool {
	if len(recv.List) == 0 {
		return false
	}
	t := recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if ix, ok := t.(*ast.IndexExpr); ok {
		t = ix.X
	}
	id, ok := t.(*ast.Ident)
	return ok && id.IsExported()
}
