// Package itest holds the helpers the integration tests share: the
// binary's tests (integration/cmdtest) and the kit's own (integration):
// building and running shardpipe and parsing its log lines, private Redis
// and Kafka servers, a Redis Cluster, secured brokers, the test receiver,
// and reading topics, offsets and ledger keys back. It is test harness: no
// library or command imports it.
package itest
