package main

import (
	"context"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
)

// runAsMainEnv set to 1 makes the test binary run as shardpipe with its
// arguments, for tests that signal a process.
const runAsMainEnv = "SHARDPIPE_TEST_RUN_AS_MAIN"

func TestMain(m *testing.M) {
	redis.SetLogger(quietRedis{}) // as main does
	if os.Getenv(runAsMainEnv) == "1" {
		os.Exit(execute(context.Background(), append([]string{"shardpipe"}, os.Args[1:]...), os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
