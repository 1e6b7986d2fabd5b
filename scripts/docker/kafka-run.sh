#!/bin/sh
# /etc/kafka/docker/run: as apache/kafka's image, every KAFKA_* variable but the
# JVM ones becomes a broker setting (KAFKA_LOG_DIRS -> log.dirs; '__' -> '_',
# '___' -> '-'); CLUSTER_ID names the cluster when the log dirs are formatted.
set -eu
props=/opt/kafka/config/server.properties
: >"$props"
env | grep '^KAFKA_[A-Z0-9_]*=' | while IFS='=' read -r name value; do
	case "$name" in
	KAFKA_HEAP_OPTS | KAFKA_OPTS | KAFKA_JVM_PERFORMANCE_OPTS | KAFKA_LOG4J_OPTS | KAFKA_GC_LOG_OPTS | KAFKA_JMX_OPTS | KAFKA_TOOLS_HEAP_OPTS) continue ;;
	esac
	key="$(printf '%s' "${name#KAFKA_}" | tr 'A-Z' 'a-z' | sed -e 's/___/-/g' -e 's/__/@/g' -e 's/_/./g' -e 's/@/_/g')"
	printf '%s=%s\n' "$key" "$value" >>"$props"
done
grep -q '^process.roles=' "$props" || {
	echo "kafka run: set KAFKA_PROCESS_ROLES and the other KRaft settings (KAFKA_NODE_ID, KAFKA_LISTENERS, ...)" >&2
	exit 2
}
cluster_id="${CLUSTER_ID:-5L6g3nShT-eMCtK--X86sw}"
/opt/kafka/bin/kafka-storage.sh format --cluster-id "$cluster_id" -c "$props" --ignore-formatted >&2
# shellcheck disable=SC2086
exec java ${KAFKA_HEAP_OPTS:--Xms256m -Xmx1g} -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:+ExitOnOutOfMemoryError \
	-Djava.awt.headless=true -Dlog4j2.configurationFile=/opt/kafka/config/log4j2.properties \
	${KAFKA_OPTS:-} -cp '/opt/kafka/libs/*' kafka.Kafka "$props"
