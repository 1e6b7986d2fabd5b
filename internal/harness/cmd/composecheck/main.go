// Command composecheck is `make test-docker`'s compose part: it runs the
// users' docker-compose.yml (with scripts/docker/compose.test.yml, which
// changes only images, host networking and addresses) and checks, with the
// independent checker internal/harness/chaoscheck, that the orders landed exactly
// once: up and healthy (the shardpipe service's healthcheck is `shardpipe
// probe`), 10,000 orders with re-sends produced and drained, a `docker
// compose stop shardpipe` that commits within stop_grace_period (exit 0, lag
// 0), and a `docker kill` mid-stream and restart that stays exact. It prints
// one summary line. It needs DOCKER_COMPOSE (scripts/docker.sh run sets it)
// and leaves nothing behind (compose down -v) unless -keep.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	var c config
	flag.StringVar(&c.compose, "compose", os.Getenv("DOCKER_COMPOSE"), "Compose v2 binary (default $DOCKER_COMPOSE)")
	flag.StringVar(&c.project, "project", "shardpipe-test", "compose project name")
	flag.StringVar(&c.file, "file", "docker-compose.yml", "the users' compose file")
	flag.StringVar(&c.override, "override", "scripts/docker/compose.test.yml", "the test override")
	flag.DurationVar(&c.timeout, "timeout", 15*time.Minute, "give up after this long")
	flag.BoolVar(&c.keep, "keep", false, "leave the stack and its volumes up at the end")
	flag.Parse()
	if c.compose == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "composecheck: set -compose or DOCKER_COMPOSE (scripts/docker.sh run sets it); no arguments")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	sum, err := c.check(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "composecheck: FAIL:", err)
		os.Exit(1)
	}
	fmt.Println(sum)
}
