package main

// otherVariables returns the SHARDPIPE_ variables that are no flag's and that
// a command does not refuse (cliflags.CheckEnv refuses any other unknown
// one): the passwords read by name (kafkaGroup, redisGroup), and the
// variables of shardpipe's own scripts and tests, which share the prefix
// and may be in the environment a command runs in (scripts/services.sh,
// scripts/services-cluster.sh, make test, the integration tests).
// TestEveryVariableKnown checks that every SHARDPIPE_ name in the
// repository is a flag's variable or one of these.
func otherVariables() []string {
	return []string{
		// read by the commands
		"SHARDPIPE_KAFKA_SASL_PASSWORD", "SHARDPIPE_REDIS_PASSWORD", "SHARDPIPE_SQL_PASSWORD",
		// scripts/services.sh, services-cluster.sh and services-postgres.sh
		"SHARDPIPE_SERVICES_DIR", "SHARDPIPE_KAFKA_VERSION", "SHARDPIPE_KAFKA_PORT", "SHARDPIPE_KAFKA_CONTROLLER_PORT",
		"SHARDPIPE_KAFKA_HEAP", "SHARDPIPE_KAFKA_EXTRA_CONFIG", "SHARDPIPE_LOG4J_VERSION", "SHARDPIPE_MVN_ARGS",
		"SHARDPIPE_REDIS_PORT", "SHARDPIPE_REDIS_APPENDFSYNC", "SHARDPIPE_VALKEY_VERSION", "SHARDPIPE_PIP_ARGS",
		"SHARDPIPE_READY_TIMEOUT", "SHARDPIPE_KAFKA_CLUSTER_PORTS", "SHARDPIPE_KAFKA_CLUSTER_HEAP",
		"SHARDPIPE_REDIS_CLUSTER_PORTS", "SHARDPIPE_REDIS_CLUSTER_NODE_TIMEOUT", "SHARDPIPE_POSTGRES_PORT",
		// scripts/docker.sh and scripts/test-docker.sh
		"SHARDPIPE_COMPOSE_VERSION", "SHARDPIPE_DEBIAN_MIRROR", "SHARDPIPE_DOCKER_NETWORK",
		// make test and the tests
		"SHARDPIPE_REQUIRE_INTEGRATION", "SHARDPIPE_CLUSTER_TESTS", "SHARDPIPE_CHAOS_SEED", "SHARDPIPE_KAFKA_IMAGE",
		"SHARDPIPE_REDIS_IMAGE", "SHARDPIPE_STATUS_SCREENSHOT", "SHARDPIPE_ZOMBIE_CHILD", "SHARDPIPE_TEST_RUN_AS_MAIN",
		"SHARDPIPE_TEST_BENCH_PASSWORD",
		// read only by a binary built with the shardpipe_faults tag (faultkill.go)
		"SHARDPIPE_FAULT_KILL_AFTER_EFFECT",
	}
}
