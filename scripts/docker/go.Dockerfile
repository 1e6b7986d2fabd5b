# A local stand-in for golang:<version>-bookworm (built by scripts/docker.sh):
# the Debian base with the host's Go toolchain in /usr/local/go and the host's CA
# bundle (the module proxy is reached as the host reaches it).
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ca-certificates && rm -rf /var/lib/apt/lists/*
COPY go/ /usr/local/go/
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
ENV PATH=/usr/local/go/bin:/root/go/bin:$PATH GOTOOLCHAIN=local
