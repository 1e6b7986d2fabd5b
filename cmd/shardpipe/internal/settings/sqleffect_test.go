package settings

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/sink"
)

// TestSQLGroup: --effect sql's flags, and where its password comes from:
// --sql-password-file, else SHARDPIPE_SQL_PASSWORD, else PGPASSWORD; a URL
// carrying a password is refused.
func TestSQLGroup(t *testing.T) {
	pwFile := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pwFile, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const url, exec = "--sql-url=postgres://app@db:5432/shop", "--sql-exec=INSERT INTO t VALUES (@id)"
	tests := []struct {
		name     string
		args     []string
		env      map[string]string
		want     []string
		password string
		from     string
	}{
		{"file wins", []string{url, exec, "--sql-password-file=" + pwFile, "--sql-inbox-keep=168h"}, map[string]string{EnvSQLPassword: "env", "PGPASSWORD": "pg"}, nil, "from-file", "file " + pwFile},
		{"shardpipe variable next", []string{url, exec}, map[string]string{EnvSQLPassword: "env", "PGPASSWORD": "pg"}, nil, "env", "$" + EnvSQLPassword},
		{"PGPASSWORD last", []string{url, exec}, map[string]string{EnvSQLPassword: "", "PGPASSWORD": "pg"}, nil, "pg", "$PGPASSWORD"},
		{"password in the URL", []string{"--sql-url=postgres://app:s3cret@db/shop", exec}, nil, []string{`--sql-url (SHARDPIPE_SQL_URL) "postgres://app:xxxxx@db/shop": carries a password`}, "", ""},
		{"password parameter", []string{"--sql-url=postgres://app@db/shop?password=s3cret", exec}, nil, []string{"carries a password"}, "", ""},
		{"not postgres", []string{"--sql-url=db:5432", exec}, nil, []string{"want a postgres:// URL with a host"}, "", ""},
		{"no statement", []string{url}, nil, []string{"--sql-exec (SHARDPIPE_SQL_EXEC): pgeffect: empty statement"}, "", ""},
		{"empty inbox", []string{url, exec, "--sql-inbox-table="}, nil, []string{"--sql-inbox-table (SHARDPIPE_SQL_INBOX_TABLE): empty"}, "", ""},
		{"negative keep", []string{url, exec, "--sql-inbox-keep=-1h"}, nil, []string{"--sql-inbox-keep (SHARDPIPE_SQL_INBOX_KEEP) -1h0m0s: want"}, "", ""},
		{"missing password file", []string{url, exec, "--sql-password-file=" + pwFile + ".missing"}, nil, []string{"--sql-password-file (SHARDPIPE_SQL_PASSWORD_FILE): "}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(EnvSQLPassword, "")
			t.Setenv("PGPASSWORD", "")
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			var s SQL
			on := true
			bad := load(t, SQLGroup(&s, &on), tt.args...)
			checkProblems(t, tt.args, bad, tt.want...)
			if len(tt.want) > 0 {
				return
			}
			if s.Config.ConnConfig.Password != tt.password || s.PasswordFrom != tt.from || s.Inbox != "shardpipe_inbox" ||
				len(s.Statement.Names()) != 1 || tt.name == "file wins" && s.Keep != 168*time.Hour {
				t.Errorf("loaded password %q from %q, inbox %q, names %q; want %q from %q",
					s.Config.ConnConfig.Password, s.PasswordFrom, s.Inbox, s.Statement.Names(), tt.password, tt.from)
			}
		})
	}
}

// TestSQLManifest: the ledger's manifest records effect sql, and a stored
// sql effect is never taken without --effect sql (it needs --sql-url).
func TestSQLManifest(t *testing.T) {
	l := Ledger{SQL: true, Given: LedgerGiven{Effect: true}}
	if m := l.Manifest(nil, "v"); m.Effect != "sql" {
		t.Fatalf("manifest effect %q, want sql", m.Effect)
	}
	none := Ledger{}
	if problems, _ := none.Reconcile(sink.Manifest{Effect: "sql", KeySpace: "shared"}); len(problems) != 1 {
		t.Fatalf("a stored sql effect without --effect sql: problems %q, want one", problems)
	}
	if problems, _ := l.Reconcile(sink.Manifest{Effect: "sql", KeySpace: "shared"}); len(problems) != 0 {
		t.Fatalf("--effect sql on an sql ledger: problems %q", problems)
	}
}
