#!/usr/bin/env bash
# with-services.sh CMD [ARGS...]: run CMD with real Kafka, Redis and PostgreSQL.
#
# Starts the services with scripts/services.sh (reusing any already running),
# exports KAFKA_BROKERS, REDIS_ADDR and POSTGRES_URL, runs CMD, then stops only the services
# that were not running before, and exits with CMD's status. Runs sharing one
# services directory take turns (flock).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
services="$ROOT/scripts/services.sh"
(($# > 0)) || { echo "usage: $0 CMD [ARGS...]" >&2; exit 2; }

# One run at a time per services directory: otherwise a run that started the
# services could stop them under another run that found them running.
state="${SHARDPIPE_SERVICES_DIR:-$ROOT/.cache/services}"
mkdir -p "$state"
if command -v flock >/dev/null 2>&1; then
	exec 9>"$state/with-services.lock"
	if ! flock -n 9; then
		echo "with-services: another run uses the services in this checkout; waiting for it" >&2
		flock 9
	fi
fi

started=() kept=()
for s in kafka redis postgres; do
	if "$services" status "$s" >/dev/null; then
		kept+=("$s")
	else
		started+=("$s")
	fi
done

cleanup() {
	local rc=$? s
	for s in "${started[@]}"; do
		"$services" stop "$s" 9>&- || rc=1 # a failed stop must not pass unnoticed
	done
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
if ((${#kept[@]} > 0)); then
	echo "with-services: ${kept[*]} already running; leaving it running afterwards" >&2
fi

"$services" start 9>&- # the servers must not inherit the lock
"$services" start postgres 9>&- # the SQL effect's integration tests
eval "$("$services" env)"
"$@"
