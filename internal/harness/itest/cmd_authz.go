package itest

import (
	"math/rand/v2"
	"net"
	"strconv"
	"testing"
)

// FreeLowPort returns a loopback port below the ephemeral range that is free
// now: a client retrying a connect to a port of the ephemeral range before
// the broker listens can be given that very port as its own (a TCP
// self-connect) and keep the broker from binding it.
func FreeLowPort(t *testing.T, taken map[int]bool) int {
	t.Helper()
	for range 200 {
		p := 20000 + rand.IntN(12000)
		if taken[p] {
			continue
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		_ = l.Close()
		taken[p] = true
		return p
	}
	t.Fatal("no free port in 20000..32000")
	return 0
}
