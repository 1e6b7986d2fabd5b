package apicheck

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// readmeImports are the packages the docs' snippets may use without importing
// them: a snippet shows the calls, not the import block.
var readmeImports = map[string]string{
	"admin":        "github.com/shardpipe/shardpipe/admin",
	"checkpoint":   "github.com/shardpipe/shardpipe/checkpoint",
	"context":      "context",
	"embedded":     "github.com/shardpipe/shardpipe/integration/embedded",
	"errors":       "errors",
	"fmt":          "fmt",
	"http":         "net/http",
	"integration":  "github.com/shardpipe/shardpipe/integration",
	"kgo":          "github.com/twmb/franz-go/pkg/kgo",
	"orderhandler": "example.com/orderhandler",
	"pipeline":     "github.com/shardpipe/shardpipe/pipeline",
	"redis":        "github.com/redis/go-redis/v9",
	"scenario":     "github.com/shardpipe/shardpipe/integration/scenario",
	"sink":         "github.com/shardpipe/shardpipe/sink",
	"slog":         "log/slog",
	"sync":         "sync",
	"testing":      "testing",
	"time":         "time",
}

// TestREADMEGoBlocksCompile builds every ```go block of README.md,
// CONTRIBUTING.md and docs/*.md against the module as it is, in a module of
// its own (as a user would import shardpipe, examples/orderhandler
// included): each page's blocks in a package of their own, a block with
// declarations as a file, a block of statements as the body of a function
// of t *testing.T. Missing imports of readmeImports are added and variables
// a snippet declares but does not use are used, nothing else: a snippet
// that calls a name the API no longer has fails the test.
func TestREADMEGoBlocksCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the docs' snippets with the go command")
	}
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	blockRe := regexp.MustCompile("(?ms)^```go\n(.*?)^```")
	dir := t.TempDir()
	blocks := 0
	for _, page := range docFiles(t, root) {
		text, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page)))
		if err != nil {
			t.Fatal(err)
		}
		found := blockRe.FindAllSubmatch(text, -1)
		if page == "README.md" && len(found) == 0 {
			t.Fatal("README.md has no ```go block")
		}
		pkg := filepath.Join(dir, strings.NewReplacer("/", "_", ".", "_").Replace(page))
		if len(found) > 0 {
			if err := os.Mkdir(pkg, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for i, b := range found {
			src, err := snippetFile(string(b[1]))
			if err != nil {
				t.Fatalf("%s go block %d: %v\n%s", page, i+1, err, b[1])
			}
			if err := os.WriteFile(filepath.Join(pkg, fmt.Sprintf("block%d.go", i+1)), src, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		blocks += len(found)
	}
	gomod := fmt.Sprintf(`module readmecheck

go 1.26.0

require (
	github.com/shardpipe/shardpipe v0.0.0-00010101000000-000000000000
	example.com/orderhandler v0.0.0-00010101000000-000000000000
)

replace github.com/shardpipe/shardpipe => %s

replace example.com/orderhandler => %s
`, root, filepath.Join(root, "examples", "orderhandler"))
	var sum []byte
	for _, p := range []string{filepath.Join(root, "go.sum"), filepath.Join(root, "examples", "orderhandler", "go.sum")} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		sum = append(sum, b...)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the docs' Go blocks do not compile against the module: %v\n%s", err, out)
	}
	t.Logf("%d Go blocks of README.md, CONTRIBUTING.md and docs/*.md compile", blocks)
}

// snippetFile makes a Go file of package readme from a docs snippet.
func snippetFile(snippet string) ([]byte, error) {
	body := snippet
	statements := !regexp.MustCompile(`(?m)^(import|func|type|var|const)\b`).MatchString(snippet)
	if statements {
		body = "func _(t *testing.T) {\n" + snippet + "}\n"
	}
	src := "package readme\n\n" + body
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "snippet.go", src, parser.AllErrors)
	if err != nil {
		return nil, err
	}
	if statements { // use what the snippet declares, as the code after it would
		var uses []string
		for _, st := range f.Decls[len(f.Decls)-1].(*ast.FuncDecl).Body.List {
			if as, ok := st.(*ast.AssignStmt); ok && as.Tok == token.DEFINE {
				for _, l := range as.Lhs {
					if id, ok := l.(*ast.Ident); ok && id.Name != "_" {
						uses = append(uses, "\t_ = "+id.Name+"\n")
					}
				}
			}
		}
		body = "func _(t *testing.T) {\n" + snippet + strings.Join(uses, "") + "}\n"
	}
	imported := map[string]bool{}
	for _, im := range f.Imports {
		imported[strings.Trim(im.Path.Value, `"`)] = true
	}
	var add []string
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok {
				if p, ok := readmeImports[id.Name]; ok && !imported[p] && !slices.Contains(add, p) {
					add = append(add, p)
				}
			}
		}
		return true
	})
	if statements && !imported["testing"] && !slices.Contains(add, "testing") {
		add = append(add, "testing")
	}
	var out bytes.Buffer
	out.WriteString("package readme\n\n")
	for _, p := range add {
		fmt.Fprintf(&out, "import %q\n", p)
	}
	out.WriteString("\n" + body)
	return out.Bytes(), nil
}
