#!/usr/bin/env bash
# scripts/docker.sh: a Docker engine and the images docker-compose.yml and the
# integration kit use, built locally (no image registry needed).
#
#   scripts/docker.sh images        start an engine if none answers, build the images, stop what it started
#   scripts/docker.sh run CMD ...   the same, then run CMD with the variables below set; stop what it started
#   scripts/docker.sh compose       build Compose v2 once (Go module) and print its path
#
# Images (each built once, again only when its inputs change):
#   shardpipe-local/debian:bookworm  debootstrap --variant=minbase from apt's Debian mirror
#   shardpipe-local/golang:GOVERSION the base plus this machine's Go toolchain and CA bundle (GO_IMAGE)
#   shardpipe-local/runtime:nonroot  the base plus CA certificates and user nonroot (its RUNTIME_IMAGE)
#   shardpipe-local/kafka:VERSION    Kafka's jars (scripts/services.sh fetch kafka, plus kafka-tools),
#                                    a Debian JRE, /etc/kafka/docker/run and /opt/kafka/bin as apache/kafka's
#   shardpipe-local/redis:bookworm   Debian's redis-server
#   shardpipe:local                  the project's Dockerfile, built from the two local base images
#
# CMD sees DOCKER_COMPOSE (the Compose v2 binary), SHARDPIPE_KAFKA_IMAGE and SHARDPIPE_REDIS_IMAGE.
# An engine this script starts keeps its data (images) in .cache/docker/engine, logs to
# .cache/docker/dockerd.log and is stopped by its pid. Needs root to start an engine, apt-get for
# docker.io and debootstrap when missing, Go, Maven. Variables: SHARDPIPE_KAFKA_VERSION (4.4.0),
# SHARDPIPE_COMPOSE_VERSION (v2.40.3), SHARDPIPE_DEBIAN_MIRROR (default: apt's Debian source).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="$ROOT/.cache/docker"
KAFKA_VERSION="${SHARDPIPE_KAFKA_VERSION:-4.4.0}"
COMPOSE_VERSION="${SHARDPIPE_COMPOSE_VERSION:-v2.40.3}"
COMPOSE_BIN="$CACHE/docker-compose-$COMPOSE_VERSION"
DOCKERD_PID="$CACHE/dockerd.pid"
BASE_IMAGE=shardpipe-local/debian:bookworm
RUNTIME_IMAGE=shardpipe-local/runtime:nonroot
KAFKA_IMAGE="shardpipe-local/kafka:$KAFKA_VERSION"
REDIS_IMAGE=shardpipe-local/redis:bookworm
APP_IMAGE=shardpipe:local
STARTED_ENGINE=""

log() { printf 'docker.sh: %s\n' "$*" >&2; }
die() { printf 'docker.sh: error: %s\n' "$*" >&2; exit 1; }

apt_install() { # apt_install CMD PACKAGE
	command -v "$1" >/dev/null 2>&1 && return 0
	[[ "$(id -u)" == 0 ]] || die "$1 not found; install $2 (apt-get install -y $2) or run as root"
	log "installing $2 (apt-get)"
	apt-get update -qq >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null
}

# ---------------------------------------------------------------- engine

engine_answers() { timeout 10 docker info >/dev/null 2>&1; }

start_engine() {
	if engine_answers; then
		return 0
	fi
	apt_install dockerd docker.io
	command -v docker >/dev/null 2>&1 || die "no docker command (apt-get install -y docker.io)"
	[[ "$(id -u)" == 0 ]] || die "no Docker engine answers and starting one needs root"
	mkdir -p "$CACHE/engine"
	log "starting dockerd (data in .cache/docker/engine, log .cache/docker/dockerd.log)"
	dockerd --data-root "$CACHE/engine" --pidfile "$CACHE/dockerd.run.pid" >"$CACHE/dockerd.log" 2>&1 &
	echo $! >"$DOCKERD_PID"
	STARTED_ENGINE=$!
	trap stop_engine EXIT
	local deadline=$((SECONDS + 60))
	until engine_answers; do
		kill -0 "$STARTED_ENGINE" 2>/dev/null || { tail -n 20 "$CACHE/dockerd.log" >&2; die "dockerd exited; see .cache/docker/dockerd.log"; }
		((SECONDS < deadline)) || die "dockerd did not answer within 60s; see .cache/docker/dockerd.log"
		sleep 0.2
	done
	log "dockerd up (pid $STARTED_ENGINE)"
}

stop_engine() {
	local rc=$?
	if [[ -n "$STARTED_ENGINE" ]] && kill -0 "$STARTED_ENGINE" 2>/dev/null; then
		log "stopping the dockerd this script started (pid $STARTED_ENGINE)"
		kill -TERM "$STARTED_ENGINE"
		wait "$STARTED_ENGINE" 2>/dev/null || true
		rm -f "$DOCKERD_PID"
	fi
	exit "$rc"
}

# ---------------------------------------------------------------- images

# inputs_hash FILE...: a short hash of the named files' contents (an image's inputs).
inputs_hash() { cat "$@" | sha256sum | cut -c1-16; }

# image_current IMAGE HASH: IMAGE exists and was built from inputs with HASH.
image_current() {
	[[ "$(docker image inspect -f '{{index .Config.Labels "shardpipe.inputs"}}' "$1" 2>/dev/null || true)" == "$2" ]]
}

debian_mirror() {
	if [[ -n "${SHARDPIPE_DEBIAN_MIRROR:-}" ]]; then
		echo "$SHARDPIPE_DEBIAN_MIRROR"
		return
	fi
	local m
	m="$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ && $2 ~ /\/debian\/?$/ {print $2; exit}')"
	[[ -n "$m" ]] || m="$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | awk '/^deb / && $2 ~ /\/debian\/?$/ {print $2; exit}')"
	[[ -n "$m" ]] || die "no Debian mirror found in apt's sources; set SHARDPIPE_DEBIAN_MIRROR"
	echo "$m"
}

build_base() {
	docker image inspect "$BASE_IMAGE" >/dev/null 2>&1 && return 0
	local tarball="$CACHE/debian-bookworm-minbase.tar"
	if [[ ! -f "$tarball" ]]; then
		apt_install debootstrap debootstrap
		local mirror dir="$CACHE/rootfs.tmp"
		mirror="$(debian_mirror)"
		log "debootstrap --variant=minbase bookworm from $mirror (about a minute, once)"
		rm -rf "$dir"
		debootstrap --variant=minbase bookworm "$dir" "$mirror" >"$CACHE/debootstrap.log" 2>&1 ||
			{ tail -n 20 "$CACHE/debootstrap.log" >&2; die "debootstrap failed; see .cache/docker/debootstrap.log"; }
		rm -rf "$dir/var/cache/apt/archives/"*.deb
		tar -C "$dir" -cf "$tarball.tmp" .
		mv "$tarball.tmp" "$tarball"
		rm -rf "$dir"
	fi
	log "importing $BASE_IMAGE"
	docker import "$tarball" "$BASE_IMAGE" >/dev/null
}

# build IMAGE HASH CONTEXT DOCKERFILE [ARGS...]: docker build unless IMAGE holds HASH.
build() {
	local image="$1" hash="$2" ctx="$3" file="$4"
	shift 4
	image_current "$image" "$hash" && return 0
	log "building $image"
	docker_build "$image" --label "shardpipe.inputs=$hash" -f "$file" --build-arg "BASE_IMAGE=$BASE_IMAGE" "$@" "$ctx"
}

# docker_build IMAGE ARGS...: docker build --network host -t IMAGE, its output in .cache/docker/build-*.log.
docker_build() {
	local image="$1" out
	shift
	out="$CACHE/build-$(tr -c 'a-zA-Z0-9.\n' - <<<"${image#*/}").log"
	docker build --network host -t "$image" "$@" >"$out" 2>&1 ||
		{ tail -n 30 "$out" >&2; die "docker build of $image failed; see ${out#"$ROOT/"}"; }
}

build_go() {
	local goroot version ctx="$CACHE/ctx-go"
	goroot="$(go env GOROOT)"
	version="$(go env GOVERSION)"
	GO_IMAGE="shardpipe-local/golang:${version#go}"
	local hash
	local ca=/etc/ssl/certs/ca-certificates.crt
	[[ -f "$ca" ]] || die "no CA bundle at $ca (apt-get install -y ca-certificates)"
	hash="$(echo "$version" | cat - "$ROOT/scripts/docker/go.Dockerfile" "$ca" | sha256sum | cut -c1-16)"
	image_current "$GO_IMAGE" "$hash" && return 0
	rm -rf "$ctx"
	mkdir -p "$ctx"
	cp -a "$goroot" "$ctx/go"
	cp "$ca" "$ctx/ca-certificates.crt"
	build "$GO_IMAGE" "$hash" "$ctx" "$ROOT/scripts/docker/go.Dockerfile"
	rm -rf "$ctx"
}

# fetch_kafka_tools: kafka-tools (the /opt/kafka/bin commands) and its runtime jars, once.
fetch_kafka_tools() {
	local home="$ROOT/.cache/kafkatools-$KAFKA_VERSION" # not kafka-*: tests glob that for the broker's jars
	if [[ ! -f "$home/.complete" ]]; then
		log "fetching org.apache.kafka:kafka-tools:$KAFKA_VERSION from Maven Central (once)"
		rm -rf "$home.tmp"
		mkdir -p "$home.tmp"
		cat >"$home.tmp/pom.xml" <<POM
<?xml version="1.0" encoding="UTF-8"?>
<!-- Generated by scripts/docker.sh: fetches Kafka's command-line tools. -->
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>io.shardpipe.local</groupId>
  <artifactId>kafka-tools-fetch</artifactId>
  <version>0</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-tools</artifactId><version>$KAFKA_VERSION</version></dependency>
  </dependencies>
</project>
POM
		# shellcheck disable=SC2086
		mvn -B -q -f "$home.tmp/pom.xml" ${SHARDPIPE_MVN_ARGS:-} dependency:copy-dependencies \
			-DincludeScope=runtime -DoutputDirectory="$home.tmp/lib" >"$home.tmp/mvn.log" 2>&1 ||
			{ tail -n 40 "$home.tmp/mvn.log" >&2; die "mvn could not fetch kafka-tools $KAFKA_VERSION"; }
		touch "$home.tmp/.complete"
		rm -rf "$home"
		mv "$home.tmp" "$home"
	fi
	echo "$home"
}

build_kafka() {
	local broker tools ctx="$CACHE/ctx-kafka" d="$ROOT/scripts/docker" hash
	broker="$("$ROOT/scripts/services.sh" fetch kafka)"
	tools="$(fetch_kafka_tools)"
	hash="$( (ls "$broker/lib"; ls "$tools/lib"; cat "$d/kafka.Dockerfile" "$d/kafka-run.sh" "$d/kafka-tool.sh" "$d/log4j2.properties") | sha256sum | cut -c1-16)"
	image_current "$KAFKA_IMAGE" "$hash" && return 0
	rm -rf "$ctx"
	mkdir -p "$ctx/libs"
	cp "$broker"/lib/*.jar "$ctx/libs/"
	local jar
	for jar in "$tools"/lib/*.jar; do # the tools' closure shares most jars with the broker's
		[[ -e "$ctx/libs/${jar##*/}" ]] || cp "$jar" "$ctx/libs/"
	done
	cp "$d/kafka-run.sh" "$d/kafka-tool.sh" "$d/log4j2.properties" "$ctx/"
	build "$KAFKA_IMAGE" "$hash" "$ctx" "$d/kafka.Dockerfile"
	rm -rf "$ctx"
}

build_images() {
	local d="$ROOT/scripts/docker"
	build_base
	build_go
	build "$RUNTIME_IMAGE" "$(inputs_hash "$d/runtime.Dockerfile")" "$d" "$d/runtime.Dockerfile"
	build "$REDIS_IMAGE" "$(inputs_hash "$d/redis.Dockerfile")" "$d" "$d/redis.Dockerfile"
	build_kafka
	log "building $APP_IMAGE (the project's Dockerfile; GO_IMAGE=$GO_IMAGE RUNTIME_IMAGE=$RUNTIME_IMAGE)"
	docker_build "$APP_IMAGE" --build-arg "GO_IMAGE=$GO_IMAGE" --build-arg "RUNTIME_IMAGE=$RUNTIME_IMAGE" \
		--build-arg "GOPROXY=$(go env GOPROXY)" "$ROOT"
}

# ---------------------------------------------------------------- compose

build_compose() {
	if [[ ! -x "$COMPOSE_BIN" ]]; then
		local dir src="$CACHE/compose-src"
		log "building Docker Compose $COMPOSE_VERSION from its Go module (about two minutes, once)"
		dir="$(cd "$ROOT" && go mod download -json "github.com/docker/compose/v2@$COMPOSE_VERSION" | awk -F'"' '/"Dir":/ {print $4}')"
		[[ -d "$dir" ]] || die "go mod download of github.com/docker/compose/v2@$COMPOSE_VERSION gave no folder"
		rm -rf "$src"
		cp -r "$dir" "$src"
		chmod -R u+w "$src"
		(cd "$src" && GOFLAGS=-mod=mod go build -ldflags "-X github.com/docker/compose/v2/internal.Version=$COMPOSE_VERSION" -o "$COMPOSE_BIN.tmp" ./cmd) || die "building Compose failed"
		mv "$COMPOSE_BIN.tmp" "$COMPOSE_BIN"
		rm -rf "$src"
	fi
	echo "$COMPOSE_BIN"
}

# ---------------------------------------------------------------- main

mkdir -p "$CACHE"
case "${1:-}" in
images)
	start_engine
	build_images
	;;
run)
	shift
	[[ $# -gt 0 ]] || die "run: name a command"
	compose="$(build_compose)"
	start_engine
	build_images
	rc=0
	DOCKER_COMPOSE="$compose" SHARDPIPE_KAFKA_IMAGE="$KAFKA_IMAGE" SHARDPIPE_REDIS_IMAGE="$REDIS_IMAGE" "$@" || rc=$?
	exit "$rc"
	;;
compose)
	build_compose
	;;
*)
	sed -n '2,9p' "$0" >&2
	exit 2
	;;
esac
