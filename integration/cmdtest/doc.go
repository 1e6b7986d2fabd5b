// Package cmdtest holds the tests of the shardpipe binary: each builds
// ./cmd/shardpipe and runs it as users do, against the real Kafka and
// Redis of the integration kit, and asserts what it prints, exits with and
// leaves in the servers. It has no code of its own; the helpers it shares
// with the kit's own tests (integration) live in internal/harness/itest.
package cmdtest
