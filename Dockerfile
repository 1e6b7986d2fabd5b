# shardpipe: a small static image. Build: docker build -t shardpipe .
# Stage 1 builds a static binary (no cgo); stage 2 is distroless/static, which
# holds CA certificates and a nonroot user and nothing else (no shell).
FROM golang:1.26.8-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/shardpipe ./cmd/shardpipe

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/shardpipe /shardpipe
USER nonroot:nonroot
ENTRYPOINT ["/shardpipe"]
CMD ["run"]
