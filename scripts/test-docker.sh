#!/usr/bin/env bash
# scripts/test-docker.sh: `make test-docker`, run inside `scripts/docker.sh run` (which gives
# DOCKER_COMPOSE and the local image tags). Two parts, then one summary line:
#   1. the users' docker-compose.yml with scripts/docker/compose.test.yml (internal/harness/cmd/composecheck);
#   2. the integration kit with no KAFKA_BROKERS/REDIS_ADDR: integration.Kafka and integration.Redis
#      start containers through testcontainers-go (Ryuk disabled, host networking), and
#      examples/orderhandler's tests must pass on them (SHARDPIPE_REQUIRE_INTEGRATION=1: no fallback).
# The kit's containers carry the label shardpipe.integration=kit and are removed by it at the end.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
: "${DOCKER_COMPOSE:?run under scripts/docker.sh run}"
out="$ROOT/.cache/docker"
mkdir -p "$out" .cache/bin
start=$SECONDS

go build -o .cache/bin/composecheck ./internal/harness/cmd/composecheck
compose_line="$(.cache/bin/composecheck)"

remove_kit_containers() {
	local ids
	ids="$(docker ps -aq --filter label=shardpipe.integration=kit)"
	[[ -z "$ids" ]] || docker rm -f $ids >/dev/null
}
trap remove_kit_containers EXIT
remove_kit_containers

kit_start=$SECONDS
rc=0
(cd examples/orderhandler && env -u KAFKA_BROKERS -u REDIS_ADDR TESTCONTAINERS_RYUK_DISABLED=true \
	SHARDPIPE_DOCKER_NETWORK=host SHARDPIPE_REQUIRE_INTEGRATION=1 \
	go test -count=1 -v -timeout 15m ./...) >"$out/kit-test.log" 2>&1 || rc=$?
kit_took=$((SECONDS - kit_start))
passed="$(grep -c -- '--- PASS' "$out/kit-test.log" || true)"
failed="$(grep -c -- '--- FAIL' "$out/kit-test.log" || true)"
containers="$(docker ps -aq --filter label=shardpipe.integration=kit | wc -l)"
if [[ "$rc" != 0 || "$passed" == 0 ]]; then
	tail -n 40 "$out/kit-test.log" >&2
	echo "test-docker: FAIL: examples/orderhandler on the kit's containers: $passed passed, $failed failed (log .cache/docker/kit-test.log)" >&2
	exit 1
fi
echo "test-docker: PASS in $((SECONDS - start))s; $compose_line; kit PASS in ${kit_took}s: examples/orderhandler $passed passed (tests and subtests), $failed failed, on $containers testcontainers-go containers (Kafka, Redis; host network, Ryuk off)"
