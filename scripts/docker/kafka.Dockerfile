# A local stand-in for apache/kafka (built by scripts/docker.sh where no image
# registry is reachable): Kafka's jars from Maven Central, a JRE from Debian,
# /etc/kafka/docker/run that turns KAFKA_* variables into server.properties
# as apache/kafka's image does, and the /opt/kafka/bin tools docker-compose.yml
# and integration/docker.go call.
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      openjdk-17-jre-headless && rm -rf /var/lib/apt/lists/*
COPY libs/ /opt/kafka/libs/
COPY kafka-run.sh /etc/kafka/docker/run
COPY kafka-tool.sh /opt/kafka/bin/kafka-run-class.sh
COPY log4j2.properties /opt/kafka/config/log4j2.properties
RUN set -e; cd /opt/kafka/bin; \
    for t in kafka-broker-api-versions.sh:org.apache.kafka.tools.BrokerApiVersionsCommand \
             kafka-topics.sh:org.apache.kafka.tools.TopicCommand \
             kafka-consumer-groups.sh:org.apache.kafka.tools.consumer.group.ConsumerGroupCommand \
             kafka-console-consumer.sh:org.apache.kafka.tools.consumer.ConsoleConsumer \
             kafka-console-producer.sh:org.apache.kafka.tools.ConsoleProducer \
             kafka-storage.sh:kafka.tools.StorageTool \
             kafka-server-start.sh:kafka.Kafka; do \
      printf '#!/bin/sh\nexec /opt/kafka/bin/kafka-run-class.sh %s "$@"\n' "${t#*:}" >"${t%%:*}"; \
      chmod 755 "${t%%:*}"; \
    done; \
    chmod 755 /etc/kafka/docker/run /opt/kafka/bin/kafka-run-class.sh; \
    useradd --uid 1000 --user-group --no-create-home appuser; \
    mkdir -p /var/lib/kafka/data; chown -R appuser:appuser /var/lib/kafka /opt/kafka/config
USER appuser
ENV PATH=/opt/kafka/bin:$PATH
EXPOSE 9092
ENTRYPOINT ["/etc/kafka/docker/run"]
