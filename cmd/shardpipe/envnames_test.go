package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestUnknownVariableRefused: a SHARDPIPE_ variable no command reads (a
// typo of a flag's variable, most often; the test names them by envName,
// so TestEveryVariableKnown does not find them) is refused with exit 2 and a
// "did you mean", as an unknown flag is; a variable another command reads
// is not, and a command that reads no variable (version) checks none.
func TestUnknownVariableRefused(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		args []string
		code int
		want []string // one line each, in order
	}{
		{"typo of a flag's variable", map[string]string{envName("broker"): "kafka:9092"}, []string{"run", "--topic", "or ders"}, exitUsage,
			[]string{envName("broker") + " is set, but no shardpipe command reads it; did you mean SHARDPIPE_BROKERS?", `--topic (SHARDPIPE_TOPIC) "or ders"`}},
		{"no name close", map[string]string{envName("zzzzzz"): "1"}, []string{"status", "--brokers", "127.0.0.1:1", "--group", " "}, exitUsage,
			[]string{envName("zzzzzz") + " is set, but no shardpipe command reads it", "--group (SHARDPIPE_GROUP): empty"}},
		{"another command's variable", map[string]string{"SHARDPIPE_FROM": "90m", "SHARDPIPE_COUNT": "5"}, []string{"run", "--topic", "or ders"}, exitUsage,
			[]string{`--topic (SHARDPIPE_TOPIC) "or ders"`}},
		{"a password read by name", map[string]string{"SHARDPIPE_KAFKA_SASL_PASSWORD": "x", "SHARDPIPE_REDIS_PASSWORD": "y"}, []string{"run", "--topic", "or ders"}, exitUsage,
			[]string{`--topic (SHARDPIPE_TOPIC) "or ders"`}},
		{"version", map[string]string{envName("broker"): "kafka:9092"}, []string{"version"}, exitOK, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := call(t, tt.env, tt.args...)
			lines := problemLines(stderr)
			if code != tt.code || len(lines) != len(tt.want) {
				t.Fatalf("exit %d, lines %q; want exit %d and %d lines", code, lines, tt.code, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(lines[i], w) {
					t.Errorf("line %q lacks %q", lines[i], w)
				}
			}
		})
	}
}

// TestEveryVariableKnown: every SHARDPIPE_ name in the repository's files
// (scripts, tests, documentation) is a flag's variable or one of
// otherVariables, so that no command refuses a variable of shardpipe's
// own tooling, and the list names no variable nothing uses.
func TestEveryVariableKnown(t *testing.T) {
	known := map[string]bool{}
	for _, c := range newApp(nil, nil).Commands {
		for _, f := range c.Flags {
			known[envName(f.Names()[0])] = true
		}
	}
	others := map[string]bool{}
	for _, v := range otherVariables() {
		if known[v] {
			t.Errorf("%s is a flag's variable; drop it from otherVariables", v)
		}
		others[v] = false
	}
	word := regexp.MustCompile(`SHARDPIPE_[A-Z0-9_]*[A-Z0-9]`)
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (d.Name() == ".git" || d.Name() == ".cache" || d.Name() == "testdata"):
			return filepath.SkipDir
		case d.IsDir():
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range word.FindAllString(string(b), -1) {
			if _, ok := others[m]; ok {
				others[m] = true
			} else if !known[m] {
				t.Errorf("%s: %s is no flag's variable and not in otherVariables: add it there, or the commands refuse it", path, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for v, used := range others {
		if !used {
			t.Errorf("otherVariables names %s, which no file of the repository uses", v)
		}
	}
}
