package main

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/integration"
	"go.yaml.in/yaml/v3"
)

// composeFile is the part of docker-compose.yml the test reads.
type composeFile struct {
	Services map[string]struct {
		Image       string            `yaml:"image"`
		Build       any               `yaml:"build"`
		Command     []string          `yaml:"command"`
		Environment map[string]string `yaml:"environment"`
		Ports       []string          `yaml:"ports"`
		Profiles    []string          `yaml:"profiles"`
		Healthcheck *struct {
			Test []string `yaml:"test"`
		} `yaml:"healthcheck"`
		DependsOn map[string]struct {
			Condition string `yaml:"condition"`
		} `yaml:"depends_on"`
	} `yaml:"services"`
}

func readCompose(t *testing.T) composeFile {
	t.Helper()
	b, err := os.ReadFile("../../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return c
}

// envVars returns the SHARDPIPE_* variables of a subcommand's flags.
func envVars(t *testing.T, sub string) map[string]bool {
	t.Helper()
	cmd := newApp(nil, nil).Command(sub)
	if cmd == nil {
		t.Fatalf("no subcommand %q", sub)
	}
	vars := map[string]bool{}
	for _, f := range cmd.Flags {
		if ev, ok := f.(interface{ GetEnvVars() []string }); ok {
			for _, v := range ev.GetEnvVars() {
				vars[v] = true
			}
		}
	}
	return vars
}

var pinnedTag = regexp.MustCompile(`^[a-z0-9./_-]+:[0-9]+\.[0-9]+(\.[0-9]+)?(-[a-z0-9.-]+)?$`)

// TestCompose checks what can be checked without a Docker engine: the
// services, pinned images, health checks, ports, and that every SHARDPIPE_*
// variable is a flag of the subcommand the service runs, with a value that
// command accepts.
func TestCompose(t *testing.T) {
	c := readCompose(t)
	for _, name := range []string{"kafka", "redis", "shardpipe", "producer"} {
		if _, ok := c.Services[name]; !ok {
			t.Fatalf("service %q missing", name)
		}
	}
	kafka, redis, sp, producer := c.Services["kafka"], c.Services["redis"], c.Services["shardpipe"], c.Services["producer"]
	for _, img := range []string{kafka.Image, redis.Image} {
		if !pinnedTag.MatchString(img) {
			t.Errorf("image %q: want a pinned version tag (no :latest)", img)
		}
	}
	// One value for each image: the file's tag is the one the test kit
	// starts (integration.DefaultKafkaImage, DefaultRedisImage), so what
	// the kit tests is what the file runs.
	if kafka.Image != integration.DefaultKafkaImage || redis.Image != integration.DefaultRedisImage {
		t.Errorf("images %q and %q; want the kit's %q and %q", kafka.Image, redis.Image, integration.DefaultKafkaImage, integration.DefaultRedisImage)
	}
	if !strings.HasPrefix(kafka.Image, "apache/kafka:4.") {
		t.Errorf("kafka image %q: want apache/kafka 4.x", kafka.Image)
	}
	if kafka.Environment["KAFKA_PROCESS_ROLES"] != "broker,controller" {
		t.Errorf("kafka: want one KRaft node (broker,controller), got %q", kafka.Environment["KAFKA_PROCESS_ROLES"])
	}
	if !strings.HasPrefix(redis.Image, "redis:") || !strings.Contains(strings.Join(redis.Command, " "), "--appendonly yes") {
		t.Errorf("redis: want a redis image with --appendonly yes, got %q %q", redis.Image, redis.Command)
	}
	for name, s := range map[string]struct{ health []string }{
		"kafka": {hc(kafka.Healthcheck)}, "redis": {hc(redis.Healthcheck)}, "shardpipe": {hc(sp.Healthcheck)},
	} {
		if len(s.health) == 0 {
			t.Errorf("service %s has no health check", name)
		}
	}
	if !contains(kafka.Ports, "29092:29092") || !strings.Contains(kafka.Environment["KAFKA_ADVERTISED_LISTENERS"], "localhost:29092") {
		t.Errorf("kafka: host port 29092 must be published and advertised as localhost:29092")
	}
	if !contains(redis.Ports, "6379:6379") {
		t.Errorf("redis: port 6379 not published")
	}
	if sp.Build == nil || producer.Build == nil {
		t.Errorf("shardpipe and producer must be built from the Dockerfile")
	}
	if !contains(producer.Profiles, "produce") {
		t.Errorf("producer: want profile produce, got %q", producer.Profiles)
	}
	for _, dep := range []string{"kafka", "redis"} {
		if sp.DependsOn[dep].Condition != "service_healthy" {
			t.Errorf("shardpipe must wait for %s to be healthy", dep)
		}
	}

	// Wiring: brokers and Redis point at the services and the ports they listen on.
	if sp.Environment["SHARDPIPE_BROKERS"] != "kafka:9092" || !strings.Contains(kafka.Environment["KAFKA_ADVERTISED_LISTENERS"], "//kafka:9092") {
		t.Errorf("shardpipe: SHARDPIPE_BROKERS %q does not match kafka's advertised listener", sp.Environment["SHARDPIPE_BROKERS"])
	}
	if sp.Environment["SHARDPIPE_REDIS"] != "redis:6379" {
		t.Errorf("shardpipe: SHARDPIPE_REDIS %q, want redis:6379", sp.Environment["SHARDPIPE_REDIS"])
	}

	for name, s := range c.Services {
		if s.Build == nil {
			continue
		}
		t.Run(name, func(t *testing.T) {
			sub := "run" // the image's CMD
			if len(s.Command) > 0 {
				sub = s.Command[0]
			}
			known := envVars(t, sub)
			for k, v := range s.Environment {
				if !strings.HasPrefix(k, "SHARDPIPE_") {
					continue
				}
				if !known[k] {
					t.Errorf("%s is not a variable of any 'shardpipe %s' flag", k, sub)
				}
				t.Setenv(k, v)
			}
			// The values must pass the command's validation (nothing connects).
			var err error
			switch sub {
			case "run":
				_, err = cliflags.Load[runConfig](parsed(t, sub))
			case "produce":
				_, err = cliflags.Load[produceConfig](parsed(t, sub))
			}
			if err != nil {
				t.Errorf("its environment fails 'shardpipe %s' validation: %v", sub, err)
			}
		})
	}
}

// parsed returns subcommand sub after parsing no arguments, so that its
// flags hold the environment's values.
func parsed(t *testing.T, sub string) *cli.Command {
	t.Helper()
	app := newApp(nil, nil)
	var got *cli.Command
	app.Command(sub).Action = func(_ context.Context, c *cli.Command) error { got = c; return nil }
	if err := app.Run(context.Background(), []string{"shardpipe", sub}); err != nil {
		t.Fatalf("parse %s: %v", sub, err)
	}
	return got
}

func hc(h *struct {
	Test []string `yaml:"test"`
}) []string {
	if h == nil {
		return nil
	}
	return h.Test
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// TestDockerfile checks the image is multi-stage, static and small, from
// pinned bases, and builds this command. A base given as a build argument
// (${GO_IMAGE}) is judged by its default, the public image users get.
func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var froms []string
	args := map[string]string{} // ARG NAME=default before the first FROM
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && strings.EqualFold(f[0], "ARG") && len(froms) == 0 {
			if name, def, ok := strings.Cut(f[1], "="); ok {
				args[name] = def
			}
		}
		if len(f) >= 2 && strings.EqualFold(f[0], "FROM") {
			img := f[1]
			if name, ok := strings.CutPrefix(img, "${"); ok {
				name = strings.TrimSuffix(name, "}")
				if img = args[name]; img == "" {
					t.Errorf("FROM ${%s}: the build argument needs a default before the first FROM", name)
				}
			}
			froms = append(froms, img)
		}
	}
	if len(froms) < 2 {
		t.Fatalf("want a multi-stage build, got FROM %q", froms)
	}
	for _, img := range froms {
		if strings.HasSuffix(img, ":latest") || !strings.Contains(img, ":") {
			t.Errorf("FROM %s: want a pinned tag", img)
		}
	}
	if !strings.HasPrefix(froms[0], "golang:1.26") {
		t.Errorf("build stage %s: want golang:1.26.x (go.mod's Go)", froms[0])
	}
	final := froms[len(froms)-1]
	if !strings.HasPrefix(final, "gcr.io/distroless/static") && final != "scratch" {
		t.Errorf("final stage %s: want distroless/static or scratch", final)
	}
	for _, want := range []string{"CGO_ENABLED=0", "./cmd/shardpipe", `ENTRYPOINT ["/shardpipe"]`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	ignore, err := os.ReadFile("../../.dockerignore")
	if err != nil || !strings.Contains(string(ignore), ".cache") {
		t.Errorf(".dockerignore must keep .cache (downloaded Kafka) out of the build context: %v", err)
	}
}
