package cmdtest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/internal/harness/itest"
	"github.com/twmb/franz-go/pkg/kadm"
)

// Least privilege of status and replay, as docs/security.md
// states it.
var (
	statusTopicOps = []kadm.ACLOperation{kadm.OpDescribe}
	statusGroupOps = []kadm.ACLOperation{kadm.OpDescribe}
	// Read implies Describe.
	replayTopicOps = []kadm.ACLOperation{kadm.OpRead}
)

// grant is the ACLs of a least-privilege case: operations on the topic
// and on the group.
type grant struct{ topic, group []kadm.ACLOperation }

// minusOne is each grant with one operation removed, named after it
// ("topic Read"); the full grant first, named "".
func (g grant) minusOne() (names []string, grants []grant) {
	names, grants = []string{""}, []grant{g}
	for i, op := range g.topic {
		names = append(names, "topic "+op.String())
		grants = append(grants, grant{topic: slices.Delete(slices.Clone(g.topic), i, i+1), group: g.group})
	}
	for i, op := range g.group {
		names = append(names, "group "+op.String())
		grants = append(grants, grant{topic: g.topic, group: slices.Delete(slices.Clone(g.group), i, i+1)})
	}
	return names, grants
}

// testLeastPrivilege runs status and replay, each as a principal of its
// own (an OAUTHBEARER token's subject) holding exactly docs/security.md's ACLs:
// status reports the group and replay its range, exit 0. Then, for each
// ACL, a principal holding all the others: the command exits 3 and its
// output names the refused request's error (TOPIC_AUTHORIZATION_FAILED,
// GROUP_AUTHORIZATION_FAILED). outputs collects every output.
func testLeastPrivilege(ctx context.Context, t *testing.T, k *itest.TlsKafka, bin, topic, group string, redisTLS []string,
	prefix string, outputs *[]string) {
	dir := t.TempDir()
	cmds := []struct {
		name string
		g    grant
		args []string
	}{
		{"status", grant{topic: statusTopicOps, group: statusGroupOps}, []string{"status", "--group", group, "--topic", topic, "--json"}},
		{"replay", grant{topic: replayTopicOps}, append([]string{"replay", "--topic", topic, "--from", "0",
			"--ledger-prefix", prefix + "ledger:", "--effect", "totals", "--totals-hash", prefix + "totals",
			"--checkpoint-prefix", prefix + "replay:", "--dlq-prefix", prefix, "--on-poison", "stop", "--connect-timeout", "10s"}, redisTLS...)},
	}
	for _, c := range cmds {
		names, grants := c.g.minusOne()
		if c.name == "replay" { // Read implies Describe: also Read removed, Describe kept
			names, grants = append(names, "topic READ (DESCRIBE kept)"), append(grants, grant{topic: []kadm.ACLOperation{kadm.OpDescribe}})
		}
		for i, g := range grants {
			name := c.name + " with exactly its ACLs"
			if names[i] != "" {
				name = c.name + " without " + names[i]
			}
			t.Run(name, func(t *testing.T) {
				user := fmt.Sprintf("%s-%d", c.name, i)
				token := filepath.Join(dir, user)
				if err := os.WriteFile(token, []byte(itest.UnsecuredJWT(user, time.Hour)+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				principal := "User:" + user
				if len(g.topic) > 0 {
					k.Allow(ctx, t, principal, kadm.NewACLs().Topics(topic), g.topic...)
				}
				if len(g.group) > 0 {
					k.Allow(ctx, t, principal, kadm.NewACLs().Groups(group), g.group...)
				}
				k.AwaitACLs(ctx, t, principal, len(g.topic)+len(g.group))
				args := append(append([]string{}, c.args...), "--brokers", k.Sasl, "--kafka-tls-ca", k.Ca.CertFile,
					"--kafka-sasl-mechanism", "OAUTHBEARER", "--kafka-sasl-token-file", token)
				if c.name == "replay" {
					args = append(args, "--id", user)
				}
				ctx, cancel := context.WithTimeout(ctx, time.Minute)
				defer cancel()
				p := itest.Start(t, name, bin, args...)
				select {
				case <-p.Done:
				case <-ctx.Done():
					t.Fatalf("did not exit within a minute:\n%s", lastLines(p.Output(), 20))
				}
				code := p.Code
				out := p.Output() + p.StdoutText()
				*outputs = append(*outputs, out)
				if names[i] == "" {
					if code != 0 {
						t.Fatalf("exit %d, want 0\n%s", code, lastLines(out, 30))
					}
					return
				}
				if code != 3 {
					t.Fatalf("exit %d, want 3\n%s", code, lastLines(out, 30))
				}
				// The refused request, its error and the step.
				want := []string{"Metadata: authorization failed (TOPIC_AUTHORIZATION_FAILED)"}
				switch {
				case strings.HasPrefix(names[i], "group"):
					want = []string{"DescribeGroups " + group + ": authorization failed (GROUP_AUTHORIZATION_FAILED)"}
				case strings.Contains(names[i], "kept"):
					want = []string{"Fetch " + topic + "/0: authorization failed (TOPIC_AUTHORIZATION_FAILED)"}
				}
				for _, w := range want {
					if !strings.Contains(out, w) {
						t.Fatalf("output lacks %q:\n%s", w, lastLines(out, 30))
					}
				}
				t.Logf("%s", lastLines(out, 1))
			})
		}
	}
}
