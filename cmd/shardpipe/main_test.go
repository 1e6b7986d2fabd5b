package main

import (
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
)

func TestMain(m *testing.M) {
	redis.SetLogger(quietRedis{}) // as main does
	os.Exit(m.Run())
}
