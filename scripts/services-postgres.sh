# services-postgres.sh: PostgreSQL for scripts/services.sh (sourced by it).
#
#   scripts/services.sh start postgres   initdb once under the services directory (a user shardpipe with a
#                                        random password, scram-sha-256), start it on 127.0.0.1 only
#                                        (fsync and synchronous_commit on, as the SQL effect's promise needs)
#   scripts/services.sh stop|status postgres
#   scripts/services.sh kill postgres    an immediate stop (pg_ctl -m immediate: no checkpoint, every connection cut,
#                                        crash recovery at the next start), as a crash of the server would leave it
#   scripts/services.sh env              prints POSTGRES_URL=postgres://shardpipe:PASSWORD@127.0.0.1:PORT/postgres
#                                        once it was initialised
#
# The server binaries come from Debian's postgresql package (/usr/lib/postgresql/N/bin), installed with
# apt-get when missing. initdb refuses root: run as root, the server runs as the postgres user.
# Settings: SHARDPIPE_POSTGRES_PORT (default 35432).

PG_PORT="${SHARDPIPE_POSTGRES_PORT:-35432}"
PG_STATE="$STATE/postgres"
PG_DATA="$PG_STATE/data"
PG_PID="$PG_STATE/postgres.pid"
PG_LOG="$PG_STATE/postgres.log"
PG_PASSWORD_FILE="$PG_STATE/password"

pg_bindir() { # the newest installed server's bin directory, or nothing
	local d
	d="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
	[[ -n "$d" && -x "$d/initdb" ]] && echo "$d"
}

install_postgres() {
	[[ -n "$(pg_bindir)" ]] && return 0
	command -v apt-get >/dev/null 2>&1 ||
		die "PostgreSQL is not installed and apt-get is missing. Install PostgreSQL 15 or later (initdb, pg_ctl) with your package manager."
	[[ "$(id -u)" == 0 ]] ||
		die "PostgreSQL is not installed; installing it needs root: run 'sudo apt-get update && sudo apt-get install -y postgresql' (or this script as root)"
	log "installing postgresql with apt-get"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2 || die "apt-get update failed"
	apt-get install -y -qq --no-install-recommends postgresql >&2 || die "apt-get install postgresql failed"
	[[ -n "$(pg_bindir)" ]] || die "apt-get installed postgresql but no /usr/lib/postgresql/N/bin/initdb is there"
	# Debian's package may start the system cluster; we leave it alone and run our own.
}

pg_as() { # pg_as CMD ARGS...: as the postgres user when root (initdb and postgres refuse root)
	if [[ "$(id -u)" == 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}

start_postgres() {
	if alive "$PG_PID"; then
		log "postgres already running (pid $(cat "$PG_PID")) on $HOST:$PG_PORT"
		return 0
	fi
	rm -f "$PG_PID"
	port_busy "$PG_PORT" && die "port $PG_PORT on $HOST is taken by a process this script did not start; stop it or set SHARDPIPE_POSTGRES_PORT"
	install_postgres
	local bin
	bin="$(pg_bindir)"
	mkdir -p "$PG_STATE"
	if [[ "$(id -u)" == 0 ]]; then
		chown postgres "$PG_STATE"
		pg_as test -w "$PG_STATE" ||
			die "the postgres user cannot reach $PG_STATE (a parent directory without o+x); set SHARDPIPE_SERVICES_DIR to a directory it can reach"
	fi
	if [[ ! -f "$PG_DATA/PG_VERSION" ]]; then
		rm -rf "$PG_DATA"
		(umask 077 && head -c 18 /dev/urandom | base64 | tr '+/' '-_' >"$PG_PASSWORD_FILE")
		[[ "$(id -u)" == 0 ]] && chown postgres "$PG_PASSWORD_FILE"
		log "initdb $PG_DATA (user shardpipe, scram-sha-256)"
		pg_as "$bin/initdb" -D "$PG_DATA" -U shardpipe -A scram-sha-256 --pwfile="$PG_PASSWORD_FILE" >"$PG_STATE/initdb.log" 2>&1 ||
			{ tail -n 20 "$PG_STATE/initdb.log" >&2; die "initdb failed; see $PG_STATE/initdb.log"; }
	fi
	log "starting postgres $("$bin/postgres" --version | awk '{print $3}') on $HOST:$PG_PORT (fsync on, synchronous_commit on)"
	pg_as "$bin/pg_ctl" -D "$PG_DATA" -l "$PG_LOG" -w -t 60 \
		-o "-c listen_addresses=$HOST -p $PG_PORT -k $PG_STATE -c fsync=on -c synchronous_commit=on" start >&2 ||
		{ tail -n 20 "$PG_LOG" >&2 2>/dev/null || true; die "postgres did not start; see $PG_LOG"; }
	head -n 1 "$PG_DATA/postmaster.pid" >"$PG_PID"
	alive "$PG_PID" || die "postgres started but its pid $(cat "$PG_PID") is not the server on port $PG_PORT"
	log "postgres ready on $HOST:$PG_PORT"
}

stop_postgres() {
	if ! alive "$PG_PID"; then
		rm -f "$PG_PID"
		log "postgres not running"
		return 0
	fi
	log "stopping postgres (pid $(cat "$PG_PID"))"
	pg_as "$(pg_bindir)/pg_ctl" -D "$PG_DATA" -m fast -w -t 30 stop >&2 || stop_pidfile postgres "$PG_PID"
	rm -f "$PG_PID"
}

# crash_postgres: pg_ctl stop -m immediate (SIGQUIT: the server and its backends exit at once, no
# checkpoint); the next start runs crash recovery. SIGKILL of the postmaster alone could leave backends
# holding its shared memory, and the next start would refuse.
crash_postgres() {
	alive "$PG_PID" || die "kill: postgres is not running (no live pid in $PG_PID)"
	log "stopping postgres (pid $(cat "$PG_PID")) at once: pg_ctl stop -m immediate"
	pg_as "$(pg_bindir)/pg_ctl" -D "$PG_DATA" -m immediate -w -t 30 stop >&2 || die "pg_ctl stop -m immediate failed"
}

env_postgres() {
	if [[ -s "$PG_PASSWORD_FILE" ]]; then
		echo "POSTGRES_URL=postgres://shardpipe:$(cat "$PG_PASSWORD_FILE")@$HOST:$PG_PORT/postgres"
		echo "export POSTGRES_URL"
	fi
}
