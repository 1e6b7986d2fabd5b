package integration

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// EnvPostgresURL is the variable Postgres reads: a postgres:// URL with
// the user, password and database the tests may create tables in.
const EnvPostgresURL = "POSTGRES_URL"

// PostgresHowTo says how to give the tests a real PostgreSQL.
const PostgresHowTo = `set POSTGRES_URL to a PostgreSQL 15 or later the tests may create tables in ` +
	`(in the shardpipe repository: 'scripts/services.sh start postgres && eval "$(scripts/services.sh env)"', or 'make test')`

// Postgres returns the URL of a real PostgreSQL, POSTGRES_URL. When it is
// unset the test is skipped, or failed when SHARDPIPE_REQUIRE_INTEGRATION=1.
// There is no Docker or embedded fallback.
func Postgres(t testing.TB) string {
	t.Helper()
	v := strings.TrimSpace(os.Getenv(EnvPostgresURL))
	if v == "" {
		msg := fmt.Sprintf("integration test needs a real PostgreSQL: %s is not set; %s", EnvPostgresURL, PostgresHowTo)
		if Required() {
			t.Fatalf("%s (%s=1, so this is a failure, not a skip)", msg, EnvRequire)
		}
		t.Skip(msg)
	}
	return v
}

// PostgresWithoutPassword splits raw, a postgres:// URL with a user (as
// Postgres returns it), into the URL without the password and the
// password: what `shardpipe run --effect sql` takes as --sql-url (which
// refuses a URL carrying a password) and SHARDPIPE_SQL_PASSWORD.
func PostgresWithoutPassword(t testing.TB, raw string) (dbURL, password string) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		t.Fatalf("%s: want a postgres:// URL with a user: %v", EnvPostgresURL, err)
	}
	password, _ = u.User.Password()
	u.User = url.User(u.User.Username())
	return u.String(), password
}

// NewPostgresPool returns a pgx pool on url, checked with a ping and
// closed when the test ends.
func NewPostgresPool(t testing.TB, url string) *pgxpool.Pool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatalf("integration: pgxpool.New: %v", err)
	}
	t.Cleanup(pool.Close)
	if err := pool.Ping(ctx); err != nil {
		t.Fatalf("integration: ping PostgreSQL: %v", err)
	}
	return pool
}

// PostgresTable returns a table name unique to this test and this run
// ([a-z0-9_], unquoted-safe) and drops the table, if the test made it,
// when the test ends.
func PostgresTable(t testing.TB, pool *pgxpool.Pool) string {
	t.Helper()
	name := strings.ReplaceAll(uniqueName(t, "sp_", "_"), "-", "_")
	if len(name) > 60 { // PostgreSQL keeps 63 bytes of a name
		name = name[:51] + name[len(name)-9:]
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := pool.Exec(ctx, "DROP TABLE IF EXISTS "+pgx.Identifier{name}.Sanitize()); err != nil {
			t.Logf("integration: drop table %s: %v", name, err)
		}
	})
	return name
}
