package integration

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

// kafkaEnv is the single-node KRaft broker's settings apart from its listeners.
var kafkaEnv = map[string]string{
	"KAFKA_NODE_ID":                                          "1",
	"KAFKA_PROCESS_ROLES":                                    "broker,controller",
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
}

// kafkaStarter is where the container's command waits for the script that
// knows the host port Docker mapped (the advertised listener must name it).
const kafkaStarter = "/tmp/shardpipe-start.sh"

// kafkaReady is the broker's log line once it serves.
var kafkaReady = wait.ForLog("Kafka Server started")

// Kafka starts the Kafka container once and returns its seed brokers.
func (k *dockerKit) Kafka() ([]string, error) {
	if err := k.available(); err != nil {
		return nil, err
	}
	return k.kafka.get(func() ([]string, error) {
		host, err := hostNetwork()
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if host {
			return kafkaOnHost(ctx)
		}
		return kafkaMapped(ctx)
	})
}

// kafkaOnHost runs the broker on the host's network, every listener on 127.0.0.1.
func kafkaOnHost(ctx context.Context) ([]string, error) {
	p, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	addr := func(i int) string { return "127.0.0.1:" + strconv.Itoa(p[i]) }
	env := maps.Clone(kafkaEnv)
	env["KAFKA_LISTENERS"] = "PLAINTEXT://" + addr(0) + ",BROKER://" + addr(1) + ",CONTROLLER://" + addr(2)
	env["KAFKA_ADVERTISED_LISTENERS"] = "PLAINTEXT://" + addr(0) + ",BROKER://" + addr(1)
	env["KAFKA_CONTROLLER_QUORUM_VOTERS"] = "1@" + addr(2)
	_, err = run(ctx, "Kafka", image(EnvKafkaImage, DefaultKafkaImage), hostMode,
		testcontainers.WithEnv(env),
		testcontainers.WithWaitStrategyAndDeadline(3*time.Minute, kafkaReady))
	if err != nil {
		return nil, err
	}
	return []string{addr(0)}, nil
}

// kafkaMapped runs the broker on Docker's network, its port mapped to the host.
func kafkaMapped(ctx context.Context) ([]string, error) {
	env := maps.Clone(kafkaEnv)
	env["KAFKA_CONTROLLER_QUORUM_VOTERS"] = "1@localhost:9093"
	env["KAFKA_LISTENERS"] = "PLAINTEXT://0.0.0.0:9092,BROKER://0.0.0.0:9094,CONTROLLER://0.0.0.0:9093"
	c, err := run(ctx, "Kafka", image(EnvKafkaImage, DefaultKafkaImage),
		testcontainers.WithExposedPorts("9092/tcp"),
		testcontainers.WithEnv(env),
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
		testcontainers.WithWaitStrategyAndDeadline(3*time.Minute, kafkaReady),
	)
	if err != nil {
		return nil, err
	}
	endpoint, err := c.PortEndpoint(ctx, "9092/tcp", "")
	if err != nil {
		return nil, fmt.Errorf("the Kafka container's mapped port: %w", err)
	}
	return []string{endpoint}, nil
}
