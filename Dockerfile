# shardpipe: a small static image. Build: docker build -t shardpipe .
# Stage 1 builds a static binary (no cgo); stage 2 is distroless/static, which
# holds CA certificates and a nonroot user and nothing else (no shell).
# Both base images are build arguments: scripts/docker.sh builds this same file
# from local images where no registry is reachable (GO_IMAGE must hold Go 1.26;
# RUNTIME_IMAGE must have a nonroot user).
ARG GO_IMAGE=golang:1.26.8-bookworm
ARG RUNTIME_IMAGE=gcr.io/distroless/static-debian12:nonroot

FROM ${GO_IMAGE} AS build
# The module proxy, when it is not the default (passed on as build arguments).
ARG GOPROXY
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/shardpipe ./cmd/shardpipe

FROM ${RUNTIME_IMAGE}
COPY --from=build /out/shardpipe /shardpipe
USER nonroot:nonroot
ENTRYPOINT ["/shardpipe"]
CMD ["run"]
