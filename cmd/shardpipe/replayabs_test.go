package main

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDryRunPinsRelativeBounds: a dry run whose --from (or --to) is a
// duration ago prints the time it resolved to and the command line of the
// real run over that window, with the time in place of the duration and
// without --dry-run: the real run resolves a duration again when it
// starts, minutes later, and would read another window. A bound given
// as an offset or a time prints nothing more.
func TestDryRunPinsRelativeBounds(t *testing.T) {
	broker, redisAddr, _ := fakes(t)
	if code, _, stderr := call(t, nil, "produce", "--brokers", broker, "--topic", "orders", "--partitions", "1", "--count", "5"); code != 0 {
		t.Fatalf("produce: exit %d: %s", code, stderr)
	}
	base := []string{"replay", "--brokers", broker, "--redis", redisAddr, "--topic", "orders", "--id", "r1", "--redis-allow-no-persistence"}
	rfc := `\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want []string // regexps, each matching a line of stdout; none: no such lines
	}{
		{"from a duration ago", nil, []string{"--from", "3m", "--dry-run"}, []string{
			`^dry run: --from 3m is ` + rfc + `; a run resolves a duration again when it starts, so to replay the window read here run:$`,
			`^  shardpipe replay --brokers \S+ --redis \S+ --topic orders --id r1 --redis-allow-no-persistence --from ` + rfc + `$`}},
		{"both, one from the environment", map[string]string{"SHARDPIPE_TO": "1m"}, []string{"--from=3m", "--dry-run=true"}, []string{
			`^dry run: --from 3m is ` + rfc + `, --to 1m is ` + rfc + `;`,
			`^  shardpipe replay --brokers \S+ --redis \S+ --topic orders --id r1 --redis-allow-no-persistence --from=` + rfc + ` --to ` + rfc + `$`}},
		{"an offset", nil, []string{"--from", "0", "--dry-run"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := time.Now().UTC()
			code, out, stderr := call(t, tt.env, append(append([]string{}, base...), tt.args...)...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if len(tt.want) == 0 {
				if strings.Contains(out, "resolves a duration") {
					t.Fatalf("a dry run without a duration printed a command line:\n%s", out)
				}
				return
			}
			for _, w := range tt.want {
				if !regexp.MustCompile(`(?m)` + w).MatchString(out) {
					t.Errorf("stdout has no line matching %s:\n%s", w, out)
				}
			}
			i := strings.Index(out, "  shardpipe replay")
			if i < 0 {
				t.Fatalf("no command line:\n%s", out)
			}
			m := regexp.MustCompile(`--from=? ?(` + rfc + `)`).FindStringSubmatch(out[i:])
			if m == nil {
				t.Fatalf("no time for --from:\n%s", out)
			}
			at, err := time.Parse(time.RFC3339Nano, m[1])
			if err != nil || at.Before(before.Add(-3*time.Minute-time.Second)) || at.After(time.Now().Add(-3*time.Minute)) {
				t.Fatalf("--from %s (%v): want 3m before the run", m[1], err)
			}
		})
	}
}

// TestCommandLine: a command line as given, with flags replaced (in the
// form given, or added when given by the environment), flags dropped, URL
// passwords hidden and values quoted for a shell.
func TestCommandLine(t *testing.T) {
	tests := []struct {
		args    []string
		replace map[string]string
		drop    []string
		want    string
	}{
		{[]string{"shardpipe", "replay", "--id", "r1", "--from", "3m", "--dry-run"}, map[string]string{"from": "2026-11-30T05:57:00Z"}, []string{"dry-run"},
			"shardpipe replay --id r1 --from 2026-11-30T05:57:00Z"},
		{[]string{"shardpipe", "replay", "-from=3m", "--dry-run=true", "--to", "1m"}, map[string]string{"from": "A", "to": "B"}, []string{"dry-run"},
			"shardpipe replay -from=A --to B"},
		{[]string{"shardpipe", "replay", "--id", "r 1"}, map[string]string{"from": "A"}, nil, "shardpipe replay --id 'r 1' --from A"},
		{[]string{"shardpipe", "replay", "--redis", "redis://u:secret@h:1", "--redis=redis://:pw@h:2", "--id", "it's"}, nil, nil,
			`shardpipe replay --redis redis://u:xxxxx@h:1 --redis=redis://:xxxxx@h:2 --id 'it'\''s'`},
	}
	for _, tt := range tests {
		if got := commandLine(tt.args, tt.replace, tt.drop...); got != tt.want {
			t.Errorf("commandLine(%q) = %q, want %q", tt.args, got, tt.want)
		}
	}
}
