# A local stand-in for the redis image (built by scripts/docker.sh where no
# image registry is reachable): Debian's redis-server, run from /data as the
# redis user, so docker-compose.yml's command and volume work unchanged.
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      redis-server redis-tools && rm -rf /var/lib/apt/lists/* && \
    mkdir -p /data && chown redis:redis /data
WORKDIR /data
USER redis
EXPOSE 6379
CMD ["redis-server"]
