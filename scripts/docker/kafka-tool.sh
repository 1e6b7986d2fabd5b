#!/bin/sh
# kafka-run-class.sh MAINCLASS ARGS...: run one Kafka main class on the image's jars.
# Tools log warnings only, to stderr; KAFKA_TOOLS_HEAP_OPTS sets their heap.
main="$1"
shift
# shellcheck disable=SC2086
exec java ${KAFKA_TOOLS_HEAP_OPTS:--Xmx256m} -XX:TieredStopAtLevel=1 -Djava.awt.headless=true \
	-Dlog4j2.configurationFile=/opt/kafka/config/log4j2.properties -Dshardpipe.root.level=WARN \
	-cp '/opt/kafka/libs/*' "$main" "$@"
