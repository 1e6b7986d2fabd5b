package main

import (
	"strings"
	"testing"
)

// TestReplayRejectsBadSettings: each invalid replay or reset-offsets setting
// gives exit 2 and one line naming it, before anything connects.
func TestReplayRejectsBadSettings(t *testing.T) {
	replay := []string{"replay", "--brokers", "127.0.0.1:1", "--redis", "127.0.0.1:1", "--topic", "orders", "--id", "r1", "--from", "0"}
	reset := []string{"reset-offsets", "--brokers", "127.0.0.1:1", "--topic", "orders", "--to", "earliest"}
	tests := []struct {
		name string
		base []string
		args []string
		env  map[string]string
		want string
	}{
		{"no id", replay, []string{"--id", " "}, nil, "--id (SHARDPIPE_ID): empty"},
		{"no from", replay, []string{"--from", ""}, nil, "--from (SHARDPIPE_FROM): empty"},
		{"bad from", replay, []string{"--from", "yesterday"}, nil, `--from (SHARDPIPE_FROM) "yesterday": want an offset`},
		{"negative offset", replay, []string{"--from", "-3"}, nil, `--from (SHARDPIPE_FROM) "-3": offset -3 is negative`},
		{"bad to", replay, []string{"--to", "later"}, nil, `--to (SHARDPIPE_TO) "later": want an offset`},
		{"from after to", replay, []string{"--from", "500", "--to", "100"}, nil, `--from (SHARDPIPE_FROM) "500" is not before --to (SHARDPIPE_TO) "100"`},
		{"bad partitions", replay, []string{"--partition-ids", "0,x"}, nil, `--partition-ids (SHARDPIPE_PARTITION_IDS) "0,x": "x" is not a partition number`},
		{"negative rate", replay, []string{"--rate", "-1"}, nil, "--rate (SHARDPIPE_RATE) -1: want 0 to 10000000 (0: no limit)"},
		{"empty checkpoint prefix", replay, []string{"--checkpoint-prefix", ""}, nil, "--checkpoint-prefix (SHARDPIPE_CHECKPOINT_PREFIX): empty"},
		{"bad effect", replay, []string{"--effect", "sum"}, nil, `--effect (SHARDPIPE_EFFECT) "sum": want none, totals, http or sql`},
		{"http effect without a URL", replay, []string{"--effect", "http"}, nil, "--http-url (SHARDPIPE_HTTP_URL): empty; --effect http needs the URL"},
		{"sql url with a password", replay, []string{"--effect", "sql", "--sql-url", "postgres://app:s3cret@db/shop", "--sql-exec", "INSERT INTO t VALUES (@id)"}, nil,
			`--sql-url (SHARDPIPE_SQL_URL) "postgres://app:xxxxx@db/shop": carries a password`},
		{"sql without a statement", replay, []string{"--effect", "sql", "--sql-url", "postgres://app@db/shop"}, nil, "--sql-exec (SHARDPIPE_SQL_EXEC): pgeffect: empty statement"},
		{"sql bad max in flight", replay, []string{"--effect", "sql", "--sql-url", "postgres://app@db/shop", "--sql-exec", "INSERT INTO t VALUES (@id)", "--max-in-flight", "5000"}, nil,
			"--max-in-flight (SHARDPIPE_MAX_IN_FLIGHT) 5000: want 0 to 4096"},
		{"env from", replay, nil, map[string]string{"SHARDPIPE_FROM": "soon"}, `--from (SHARDPIPE_FROM) "soon"`},
		{"replay argument", replay, []string{"extra"}, nil, `replay takes no arguments, got ["extra"]`},
		{"reset no to", reset, []string{"--to", ""}, nil, "--to (SHARDPIPE_TO): empty"},
		{"reset bad to", reset, []string{"--to", "start"}, nil, `--to (SHARDPIPE_TO) "start": want an offset`},
		{"reset empty group", reset, []string{"--group", ""}, nil, "--group (SHARDPIPE_GROUP): empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append(append([]string{}, tt.base...), tt.args...)
			if tt.env != nil {
				args = args[:len(args)-2] // drop the --from flag: the environment gives it
			}
			code, _, stderr := call(t, tt.env, args...)
			lines := problemLines(stderr)
			if code != exitUsage || len(lines) != 1 || !strings.Contains(lines[0], tt.want) {
				t.Errorf("exit %d, lines %q; want exit 2 and one line containing %q", code, lines, tt.want)
			}
		})
	}
}
