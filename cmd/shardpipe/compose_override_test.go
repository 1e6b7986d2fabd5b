package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// overrideAddressVars are the settings `make test-docker`'s override may
// change: the addresses, which on host networking are 127.0.0.1 ports.
var overrideAddressVars = []string{
	"KAFKA_LISTENERS", "KAFKA_ADVERTISED_LISTENERS", "KAFKA_CONTROLLER_QUORUM_VOTERS",
	"SHARDPIPE_BROKERS", "SHARDPIPE_REDIS", "SHARDPIPE_METRICS_ADDR",
}

// TestComposeTestOverride: scripts/docker/compose.test.yml changes only the
// images, host networking (no published ports) and addresses, each on
// 127.0.0.1, of services docker-compose.yml has; environment otherwise,
// healthchecks, depends_on, stop_grace_period, volumes and commands stay the
// users' file, so `make test-docker` tests that file.
func TestComposeTestOverride(t *testing.T) {
	users := readCompose(t)
	b, err := os.ReadFile("../../scripts/docker/compose.test.yml")
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("compose.test.yml: %v", err)
	}
	top := mapping(t, doc.Content[0])
	for k := range top {
		if k != "services" {
			t.Errorf("compose.test.yml: top-level %q; only services may be overridden", k)
		}
	}
	hostPort := regexp.MustCompile(`([A-Za-z0-9.-]*):[0-9]+`)
	for name, svcNode := range mapping(t, top["services"]) {
		svc, ok := users.Services[name]
		if !ok {
			t.Errorf("service %s: not in docker-compose.yml", name)
			continue
		}
		for key, v := range mapping(t, svcNode) {
			switch key {
			case "image":
			case "network_mode":
				if v.Value != "host" {
					t.Errorf("service %s: network_mode %q, want host", name, v.Value)
				}
			case "ports":
				if v.Tag != "!reset" || len(v.Content) != 0 {
					t.Errorf("service %s: ports must be !reset [] (host networking publishes nothing), got %s %d items", name, v.Tag, len(v.Content))
				}
			case "environment":
				for env, val := range mapping(t, v) {
					if !slices.Contains(overrideAddressVars, env) {
						t.Errorf("service %s: environment %s is not an address; the override keeps the users' settings", name, env)
						continue
					}
					if _, ok := svc.Environment[env]; !ok {
						t.Errorf("service %s: %s is not set in docker-compose.yml", name, env)
					}
					hosts := hostPort.FindAllStringSubmatch(val.Value, -1)
					if len(hosts) == 0 {
						t.Errorf("service %s: %s=%q names no host:port", name, env, val.Value)
					}
					for _, h := range hosts {
						if host := h[1][strings.LastIndex(h[1], "/")+1:]; host != "127.0.0.1" {
							t.Errorf("service %s: %s=%q: %q is not 127.0.0.1", name, env, val.Value, h[0])
						}
					}
				}
			default:
				t.Errorf("service %s: the override sets %s; it may change only image, network_mode, ports and address variables", name, key)
			}
		}
	}
}

// mapping returns a YAML mapping node's entries by key.
func mapping(t *testing.T, n *yaml.Node) map[string]*yaml.Node {
	t.Helper()
	if n.Kind != yaml.MappingNode {
		t.Fatalf("line %d: want a mapping", n.Line)
	}
	m := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		m[n.Content[i].Value] = n.Content[i+1]
	}
	return m
}
