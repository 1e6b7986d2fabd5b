package integration

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

// Images used when no endpoints are given and a Docker engine answers. The
// Kafka image is pinned to the release scripts/services.sh fetches.
const (
	DefaultKafkaImage = "apache/kafka:4.4.0"
	DefaultRedisImage = "redis:7.4"
)

// Containers are shared by every test in one test binary and started at most
// once; the testcontainers reaper (Ryuk) removes them when the binary exits.
var (
	dockerOnce sync.Once
	dockerErr  error

	kafkaOnce    sync.Once
	kafkaBrokers []string
	kafkaErr     error

	redisOnce sync.Once
	redisAddr string
	redisErr  error
)

// dockerAvailable reports, once per binary, whether a Docker engine answers.
func dockerAvailable() error {
	dockerOnce.Do(func() {
		dockerErr = func() (err error) {
			defer func() { // older testcontainers cores panic without Docker; be safe
				if r := recover(); r != nil {
					err = fmt.Errorf("%v", r)
				}
			}()
			provider, err := testcontainers.ProviderDefault.GetProvider()
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			return provider.Health(ctx) // Health closes the provider
		}()
		if dockerErr != nil {
			dockerErr = fmt.Errorf("no Docker engine answers (%v)", dockerErr)
		}
	})
	return dockerErr
}

func image(env, def string) string {
	if v := os.Getenv(env); v != "" {
		return v
	}
	return def
}

// kafkaStarter is where the container's command waits for the script that
// knows the host port Docker mapped (the advertised listener must name it).
const kafkaStarter = "/tmp/shardpipe-start.sh"

func dockerKafka() ([]string, error) {
	if err := dockerAvailable(); err != nil {
		return nil, err
	}
	kafkaOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		c, err := testcontainers.Run(ctx, image(EnvKafkaImage, DefaultKafkaImage),
			testcontainers.WithExposedPorts("9092/tcp"),
			testcontainers.WithEnv(map[string]string{
				"KAFKA_NODE_ID":                                          "1",
				"KAFKA_PROCESS_ROLES":                                    "broker,controller",
				"KAFKA_CONTROLLER_QUORUM_VOTERS":                         "1@localhost:9093",
				"KAFKA_LISTENERS":                                        "PLAINTEXT://0.0.0.0:9092,BROKER://0.0.0.0:9094,CONTROLLER://0.0.0.0:9093",
				"KAFKA_LISTENER_SECURITY_PROTOCOL_MAP":                   "PLAINTEXT:PLAINTEXT,BROKER:PLAINTEXT,CONTROLLER:PLAINTEXT",
				"KAFKA_INTER_BROKER_LISTENER_NAME":                       "BROKER",
				"KAFKA_CONTROLLER_LISTENER_NAMES":                        "CONTROLLER",
				"KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR":                 "1",
				"KAFKA_OFFSETS_TOPIC_NUM_PARTITIONS":                     "4",
				"KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR":         "1",
				"KAFKA_TRANSACTION_STATE_LOG_MIN_ISR":                    "1",
				"KAFKA_SHARE_COORDINATOR_STATE_TOPIC_REPLICATION_FACTOR": "1",
				"KAFKA_SHARE_COORDINATOR_STATE_TOPIC_MIN_ISR":            "1",
				"KAFKA_NUM_PARTITIONS":                                   "4",
				"KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS":                 "0",
				"KAFKA_GROUP_MIN_SESSION_TIMEOUT_MS":                     "500",
				"KAFKA_GROUP_CONSUMER_SESSION_TIMEOUT_MS":                "6000",
				"KAFKA_GROUP_CONSUMER_MIN_SESSION_TIMEOUT_MS":            "1000",
				"KAFKA_GROUP_CONSUMER_HEARTBEAT_INTERVAL_MS":             "500",
				"KAFKA_GROUP_CONSUMER_MIN_HEARTBEAT_INTERVAL_MS":         "100",
				"KAFKA_GROUP_CONSUMER_ASSIGNMENT_INTERVAL_MS":            "0",
				"KAFKA_HEAP_OPTS":                                        "-Xms128m -Xmx512m",
			}),
			testcontainers.WithEntrypoint("sh"),
			testcontainers.WithCmd("-c", "while [ ! -f "+kafkaStarter+" ]; do sleep 0.1; done; exec sh "+kafkaStarter),
			testcontainers.WithLifecycleHooks(testcontainers.ContainerLifecycleHooks{
				PostStarts: []testcontainers.ContainerHook{
					func(ctx context.Context, c testcontainers.Container) error {
						endpoint, err := c.PortEndpoint(ctx, "9092/tcp", "")
						if err != nil {
							return err
						}
						script := "export KAFKA_ADVERTISED_LISTENERS=PLAINTEXT://" + endpoint + ",BROKER://localhost:9094\n" +
							"exec /etc/kafka/docker/run\n"
						return c.CopyToContainer(ctx, []byte(script), kafkaStarter, 0o755)
					},
				},
			}),
			testcontainers.WithWaitStrategyAndDeadline(3*time.Minute, wait.ForLog("Kafka Server started")),
		)
		if err != nil {
			kafkaErr = fmt.Errorf("starting a Kafka container: %w", err)
			if c != nil {
				_ = c.Terminate(context.Background())
			}
			return
		}
		endpoint, err := c.PortEndpoint(ctx, "9092/tcp", "")
		if err != nil {
			kafkaErr = err
			return
		}
		kafkaBrokers = []string{endpoint}
	})
	if kafkaErr != nil {
		return nil, errors.New("a Docker engine answers but " + kafkaErr.Error())
	}
	return kafkaBrokers, nil
}

func dockerRedis() (string, error) {
	if err := dockerAvailable(); err != nil {
		return "", err
	}
	redisOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		c, err := testcontainers.Run(ctx, image(EnvRedisImage, DefaultRedisImage),
			testcontainers.WithExposedPorts("6379/tcp"),
			testcontainers.WithCmd("redis-server", "--appendonly", "yes", "--save", ""),
			testcontainers.WithWaitStrategyAndDeadline(2*time.Minute,
				wait.ForLog("Ready to accept connections"), wait.ForListeningPort("6379/tcp")),
		)
		if err != nil {
			redisErr = fmt.Errorf("starting a Redis container: %w", err)
			if c != nil {
				_ = c.Terminate(context.Background())
			}
			return
		}
		redisAddr, redisErr = c.PortEndpoint(ctx, "6379/tcp", "")
	})
	if redisErr != nil {
		return "", errors.New("a Docker engine answers but " + redisErr.Error())
	}
	return redisAddr, nil
}
