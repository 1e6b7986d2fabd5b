package integration

import (
	"context"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/testcontainers/testcontainers-go"
)

// Images used when no endpoints are given and a Docker engine answers. The
// Kafka image is pinned to the release scripts/services.sh fetches.
const (
	DefaultKafkaImage = "apache/kafka:4.4.0"
	DefaultRedisImage = "redis:7.4.2"
)

// DockerLabel is set (to "kit") on every container the kit starts, so a
// run with the reaper (Ryuk) disabled can remove them by it afterwards.
const DockerLabel = "shardpipe.integration"

// lazy is a value started at most once per test binary.
type lazy[T any] struct {
	once sync.Once
	v    T
	err  error
}

func (l *lazy[T]) get(start func() (T, error)) (T, error) {
	l.once.Do(func() { l.v, l.err = start() })
	return l.v, l.err
}

// dockerKit is the kit's one piece of package state: whether an engine
// answers, and the Kafka and Redis containers shared by every test in one
// test binary. The testcontainers reaper (Ryuk) removes them when the binary
// exits; with TESTCONTAINERS_RYUK_DISABLED=true remove them by DockerLabel.
type dockerKit struct {
	engine lazy[struct{}]
	kafka  lazy[[]string]
	redis  lazy[string]
}

var containers dockerKit

// hostNetwork reports whether EnvDockerNetwork asks for host networking.
func hostNetwork() (bool, error) {
	switch v := os.Getenv(EnvDockerNetwork); v {
	case "":
		return false, nil
	case "host":
		return true, nil
	default:
		return false, fmt.Errorf("%s=%q: the only value is host", EnvDockerNetwork, v)
	}
}

// available reports, once per binary, whether a Docker engine answers.
func (k *dockerKit) available() error {
	_, err := k.engine.get(func() (struct{}, error) {
		err := func() (err error) {
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
		if err != nil {
			return struct{}{}, fmt.Errorf("no Docker engine answers (%w)", err)
		}
		return struct{}{}, nil
	})
	return err
}

func image(env, def string) string {
	if v := os.Getenv(env); v != "" {
		return v
	}
	return def
}

// freePort is a TCP port on 127.0.0.1 that nothing listened on a moment ago
// (for a container on the host's network).
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port on 127.0.0.1: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	ls := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding %d free ports on 127.0.0.1: %w", n, err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

var hostMode = testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) { hc.NetworkMode = "host" })

var kitLabel = testcontainers.WithLabels(map[string]string{DockerLabel: "kit"})

// run starts one container and, when it fails to start, removes what started.
func run(ctx context.Context, what, img string, opts ...testcontainers.ContainerCustomizer) (testcontainers.Container, error) {
	c, err := testcontainers.Run(ctx, img, append(opts, kitLabel)...)
	if err != nil {
		if c != nil {
			_ = c.Terminate(context.Background())
		}
		return nil, fmt.Errorf("a Docker engine answers but starting a %s container (%s) failed: %w", what, img, err)
	}
	return c, nil
}
