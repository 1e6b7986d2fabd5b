# A local stand-in for distroless/static:nonroot (built by scripts/docker.sh):
# the Debian base with CA certificates and the nonroot user (uid 65532).
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ca-certificates && rm -rf /var/lib/apt/lists/* && \
    groupadd --gid 65532 nonroot && useradd --uid 65532 --gid 65532 --no-create-home nonroot
