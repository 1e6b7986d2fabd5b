package integration

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

// Redis starts the Redis container once and returns its host:port.
func (k *dockerKit) Redis() (string, error) {
	if err := k.available(); err != nil {
		return "", err
	}
	return k.redis.get(func() (string, error) {
		host, err := hostNetwork()
		if err != nil {
			return "", err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := []string{"redis-server", "--appendonly", "yes", "--save", ""}
		ready := wait.ForLog("Ready to accept connections")
		if host {
			port, err := freePort()
			if err != nil {
				return "", err
			}
			_, err = run(ctx, "Redis", image(EnvRedisImage, DefaultRedisImage), hostMode,
				testcontainers.WithCmd(append(cmd, "--bind", "127.0.0.1", "--port", strconv.Itoa(port))...),
				testcontainers.WithWaitStrategyAndDeadline(2*time.Minute, ready))
			if err != nil {
				return "", err
			}
			return "127.0.0.1:" + strconv.Itoa(port), nil
		}
		c, err := run(ctx, "Redis", image(EnvRedisImage, DefaultRedisImage),
			testcontainers.WithExposedPorts("6379/tcp"),
			testcontainers.WithCmd(cmd...),
			testcontainers.WithWaitStrategyAndDeadline(2*time.Minute, ready, wait.ForListeningPort("6379/tcp")))
		if err != nil {
			return "", err
		}
		addr, err := c.PortEndpoint(ctx, "6379/tcp", "")
		if err != nil {
			return "", fmt.Errorf("the Redis container's mapped port: %w", err)
		}
		return addr, nil
	})
}
