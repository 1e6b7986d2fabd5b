// Package clusters drives the clusters of scripts/services.sh for the tests
// and the chaos run: a Redis Cluster of three masters with one replica each
// and a Kafka of three KRaft nodes (replication factor 3,
// min.insync.replicas=2), each in a state directory of its own, on ports
// free when they start. Its callers kill, stop, pause and reshard them, so
// they are never servers anything else uses.
package clusters
