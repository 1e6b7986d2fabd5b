package integration

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// Environment variables the kit reads.
const (
	EnvKafkaBrokers = "KAFKA_BROKERS"                 // comma-separated host:port list
	EnvRedisAddr    = "REDIS_ADDR"                    // host:port
	EnvRequire      = "SHARDPIPE_REQUIRE_INTEGRATION" // "1": a missing real server fails the test
	EnvKafkaImage   = "SHARDPIPE_KAFKA_IMAGE"         // Docker image override (default DefaultKafkaImage)
	EnvRedisImage   = "SHARDPIPE_REDIS_IMAGE"         // Docker image override (default DefaultRedisImage)
	// EnvDockerNetwork "host" (a test-only setting): the kit's containers use the
	// host's network and listen on 127.0.0.1 ports, no port mapping.
	EnvDockerNetwork = "SHARDPIPE_DOCKER_NETWORK"
)

// HowTo says how to give the tests real servers; skip messages include it.
const HowTo = `set KAFKA_BROKERS and REDIS_ADDR to real servers (in the shardpipe repository: ` +
	`'scripts/services.sh start && eval "$(scripts/services.sh env)"', or 'make test'), ` +
	`or start a Docker engine (testcontainers)`

// Fallback starts stand-in servers for one test when no real ones are
// available. The integration/embedded package has one (kfake and miniredis);
// a Fallback must register its own cleanup with t.Cleanup.
type Fallback interface {
	Kafka(t testing.TB) ([]string, error)
	Redis(t testing.TB) (string, error)
}

// Option changes how Kafka and Redis find servers.
type Option func(*serverConfig)

type serverConfig struct{ fallback Fallback }

// OrEmbedded lets Kafka and Redis fall back to f when neither the environment
// nor Docker gives a real server, instead of skipping the test. The test logs
// a warning that it did not run on a real broker or Redis: an embedded fake
// proves your handler's logic, not Kafka's or Redis's behaviour. With
// SHARDPIPE_REQUIRE_INTEGRATION=1 the fallback is never used.
func OrEmbedded(f Fallback) Option { return func(c *serverConfig) { c.fallback = f } }

// Kafka returns the seed brokers of a real Kafka cluster: KAFKA_BROKERS when
// set, else a container started once per test binary when a Docker engine
// answers (testcontainers-go; the first call can take a minute), else the
// OrEmbedded fallback when given. Otherwise the test is skipped, or failed
// when SHARDPIPE_REQUIRE_INTEGRATION=1.
func Kafka(t testing.TB, opts ...Option) []string {
	t.Helper()
	if v := strings.TrimSpace(os.Getenv(EnvKafkaBrokers)); v != "" {
		return strings.Split(v, ",")
	}
	brokers, err := containers.Kafka()
	if err == nil {
		return brokers
	}
	why := EnvKafkaBrokers + " is not set and " + err.Error()
	if f := fallback(opts); f != nil && !Required() {
		brokers, ferr := f.Kafka(t)
		if ferr == nil {
			t.Logf("integration: WARNING: using an embedded stand-in for Kafka, not a real broker (%s)", why)
			return brokers
		}
		why += "; the embedded fallback failed: " + ferr.Error()
	}
	unavailable(t, "Kafka", why)
	return nil
}

// Redis returns the host:port of a real Redis, found as Kafka finds brokers
// (REDIS_ADDR, then Docker, then the OrEmbedded fallback).
func Redis(t testing.TB, opts ...Option) string {
	t.Helper()
	if v := strings.TrimSpace(os.Getenv(EnvRedisAddr)); v != "" {
		return v
	}
	addr, err := containers.Redis()
	if err == nil {
		return addr
	}
	why := EnvRedisAddr + " is not set and " + err.Error()
	if f := fallback(opts); f != nil && !Required() {
		addr, ferr := f.Redis(t)
		if ferr == nil {
			t.Logf("integration: WARNING: using an embedded stand-in for Redis, not a real server (%s)", why)
			return addr
		}
		why += "; the embedded fallback failed: " + ferr.Error()
	}
	unavailable(t, "Redis", why)
	return ""
}

func fallback(opts []Option) Fallback {
	var c serverConfig
	for _, o := range opts {
		o(&c)
	}
	return c.fallback
}

// Required reports whether SHARDPIPE_REQUIRE_INTEGRATION=1 is set.
func Required() bool { return os.Getenv(EnvRequire) == "1" }

func unavailable(t testing.TB, what, why string) {
	t.Helper()
	msg := fmt.Sprintf("integration test needs a real %s: %s; %s", what, why, HowTo)
	if Required() {
		t.Fatalf("%s (%s=1, so this is a failure, not a skip)", msg, EnvRequire)
	}
	t.Skip(msg)
}
