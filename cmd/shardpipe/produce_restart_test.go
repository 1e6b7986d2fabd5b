package main

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestProduceSurvivesBrokerRestart: a broker that is shutting down accepts
// connections and closes them during the ApiVersions handshake. franz-go
// takes such an EOF on a fresh connection for a TLS or SASL mismatch and
// fails the records at once, unless told the configuration is known good.
// produce must keep retrying until --delivery-timeout instead: the chaos
// run (make chaos) found it dying on a graceful broker restart.
func TestProduceSurvivesBrokerRestart(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var refuse, refused atomic.Int32
	c.ControlKey(kmsg.Produce.Int16(), func(kmsg.Request) (kmsg.Response, error, bool) {
		refuse.Store(3)                                      // the next three handshakes hit the broker shutting down
		return nil, errors.New("broker shutting down"), true // closes the connection; this control ends
	})
	c.ControlKey(kmsg.Metadata.Int16(), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if refuse.Load() > 0 { // the broker is going down: existing connections close too
			return nil, errors.New("broker shutting down"), true
		}
		return nil, nil, false
	})
	c.ControlKey(kmsg.ApiVersions.Int16(), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if refuse.Add(-1) >= 0 {
			refused.Add(1)
			return nil, errors.New("broker shutting down"), true
		}
		return nil, nil, false
	})
	code, _, stderr := call(t, nil, "produce", "--brokers", c.ListenAddrs()[0], "--topic", "orders", "--count", "20",
		"--delivery-timeout", "30s")
	if code != 0 || !strings.Contains(stderr, "produce: 20 records to orders") {
		t.Fatalf("exit %d, stderr:\n%s\nwant exit 0 and 20 records acknowledged", code, stderr)
	}
	if n := refused.Load(); n != 3 {
		t.Fatalf("%d handshakes refused, want 3: the test did not simulate the restart", n)
	}
}
