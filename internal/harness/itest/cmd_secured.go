package itest

import (
	"strings"
	"testing"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/testcerts"
)

// TlsRedis starts a private redis-server with a TLS port (certificate for
// 127.0.0.1 signed by ca) beside its plaintext one, and returns the server
// (its client on the plaintext port is the admin) and the TLS address.
func TlsRedis(t *testing.T, ca *testcerts.CA) (*Server, string) {
	t.Helper()
	pair, err := ca.Issue(testcerts.Spec{Name: "redis", Hosts: []string{"127.0.0.1", "localhost"}})
	if err != nil {
		t.Fatal(err)
	}
	addr := integration.ClosedAddr(t)
	port := addr[strings.LastIndexByte(addr, ':')+1:]
	s := StartServer(t, RedisBin(t), "--tls-port", port, "--tls-cert-file", pair.CertFile, "--tls-key-file", pair.KeyFile,
		"--tls-ca-cert-file", ca.CertFile, "--tls-auth-clients", "optional")
	return s, addr
}
