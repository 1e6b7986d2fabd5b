package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/urfave/cli/v3"
)

var update = flag.Bool("update", false, "rewrite docs/configuration.md's table of run's flags from the flags")

const (
	tableBegin = "<!-- run flags: generated from `shardpipe run --help` by cmd/shardpipe/readme_test.go; do not edit -->"
	tableEnd   = "<!-- end of run flags -->"
)

// configTable renders run's flags as a Markdown table.
func configTable() string {
	var b strings.Builder
	b.WriteString("| flag | environment | default | meaning |\n| --- | --- | --- | --- |\n")
	for _, f := range runCommand().Flags {
		d := f.(cli.DocGenerationFlag)
		def := strings.ReplaceAll(d.GetValue(), `"`, "")
		if def == "" {
			def = ""
		} else {
			def = "`" + def + "`"
		}
		if bf, isBool := f.(*cli.BoolFlag); isBool {
			def = fmt.Sprintf("`%v`", bf.Value)
		}
		usage := strings.ReplaceAll(d.GetUsage(), "|", `\|`)
		fmt.Fprintf(&b, "| `--%s` | `%s` | %s | %s |\n", f.Names()[0], d.GetEnvVars()[0], def, usage)
	}
	return b.String()
}

// TestREADMEConfigTable keeps docs/configuration.md's table in step with
// run's flags. Run with -update to rewrite it.
func TestREADMEConfigTable(t *testing.T) {
	const path = "../../docs/configuration.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	i, j := strings.Index(readme, tableBegin), strings.Index(readme, tableEnd)
	if i < 0 || j < i {
		t.Fatalf("docs/configuration.md lacks the markers %q ... %q", tableBegin, tableEnd)
	}
	want := tableBegin + "\n" + configTable() + tableEnd
	got := readme[i : j+len(tableEnd)]
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(readme[:i]+want+readme[j+len(tableEnd):]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("docs/configuration.md's table of run's flags is stale; run: go test ./cmd/shardpipe -run TestREADMEConfigTable -update\nwant:\n%s", want)
}

// TestHelpListsEveryFlag: `shardpipe run --help` shows every flag of the
// table with its variable, so docs/configuration.md and the help agree.
func TestHelpListsEveryFlag(t *testing.T) {
	code, out, _ := call(t, nil, "run", "--help")
	if code != 0 {
		t.Fatalf("run --help: exit %d", code)
	}
	for _, f := range runCommand().Flags {
		name := f.Names()[0]
		env := f.(cli.DocGenerationFlag).GetEnvVars()[0]
		if env != envName(name) {
			t.Errorf("--%s reads %s, want %s", name, env, envName(name))
		}
		if !strings.Contains(out, "--"+name+" ") || !strings.Contains(out, "[$"+env+"]") {
			t.Errorf("run --help lacks --%s or $%s", name, env)
		}
	}
}

// TestREADMEQuickStart: the README names the two commands of the quick start
// and the demo's seed line, and the compose commands docs/getting-started.md
// shows use services that exist.
func TestREADMEQuickStart(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for _, want := range []string{
		"go run ./cmd/shardpipe demo",
		"make test",
		"shard0=250 crash_attempts=37 checkpoint=30 replay=7 applied=1000 suppressed=7",
	} {
		if !strings.Contains(readme, want) {
			t.Errorf("README.md lacks %q", want)
		}
	}
	b, err = os.ReadFile("../../docs/getting-started.md")
	if err != nil {
		t.Fatal(err)
	}
	guide := string(b)
	if want := "docker compose --profile produce up producer"; !strings.Contains(guide, want) {
		t.Errorf("docs/getting-started.md lacks %q", want)
	}
	c := readCompose(t)
	for _, svc := range []string{"shardpipe", "producer", "redis"} {
		if _, ok := c.Services[svc]; !ok || !strings.Contains(guide, " "+svc+" ") {
			t.Errorf("docs/getting-started.md and docker-compose.yml disagree on service %q", svc)
		}
	}
}
