package chaos

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/internal/harness/chaoscheck"
)

// TestKeepEvidence: a pass that broke a promise copies the consumers' logs
// out of the work directory (which the test removes), says where, and
// prints the log lines around a decrease in the commit log of the consumer
// whose member committed it, and around a zombie not seen fenced out.
func TestKeepEvidence(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	at := time.Date(2026, 11, 30, 16, 3, 8, 717e6, time.UTC)
	dir := t.TempDir()
	line := func(d time.Duration, msg string) string {
		return `{"time":"` + at.Add(d).Format(time.RFC3339Nano) + `","level":"INFO","msg":"` + msg + `"}`
	}
	logs := map[string][]string{
		"zombie": {line(-time.Minute, "long before"), `{"time":"` + at.Add(-20*time.Second).Format(time.RFC3339Nano) + `","msg":"partitions assigned","member":"m-zombie"}`,
			line(-time.Second, "kafka: join returned UnknownMemberID, rejoining without a member id"), line(0, "partitions revoked")},
		"owner": {line(-time.Second, "owner line"), `{"time":"` + at.Format(time.RFC3339Nano) + `","msg":"partitions assigned","member":"m-owner"}`},
		"other": {line(0, "other consumer's line")},
	}
	var out strings.Builder
	r := &runner{cfg: Config{Out: &out}, group: "g", start: time.Now()}
	for i, name := range []string{"zombie", "owner", "other"} {
		path := filepath.Join(dir, name+".log")
		if err := os.WriteFile(path, []byte(strings.Join(logs[name], "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		r.all = append(r.all, &consumer{slot: i, logPath: path, protocol: "classic", cmd: &exec.Cmd{Process: &os.Process{Pid: 100 + i}}})
	}
	r.moments = []moment{{why: "zombie not seen fenced", c: r.all[0], from: at.Add(-2 * time.Second), to: at.Add(time.Second)}}
	r.keepEvidence(chaoscheck.Report{LoggedDecreases: []chaoscheck.LoggedDecrease{{Partition: 5,
		Before: chaoscheck.Commit{Offset: 118, Member: "m-owner", At: at.Add(-150 * time.Millisecond)},
		After:  chaoscheck.Commit{Offset: 117, Member: "m-zombie", At: at}}}})
	got := out.String()
	for _, want := range []string{"logs are kept in", "join returned UnknownMemberID", "owner line", `partition 5: 118 by member "m-owner"`} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	for _, not := range []string{"long before", "other consumer's line"} {
		if strings.Contains(got, not) {
			t.Errorf("output has %q (outside the window, or a consumer neither member names):\n%s", not, got)
		}
	}
	kept := strings.TrimSpace(got[strings.Index(got, "kept in ")+len("kept in "):])
	kept = strings.SplitN(kept, "\n", 2)[0]
	if b, err := os.ReadFile(filepath.Join(kept, "zombie.log")); err != nil || !strings.Contains(string(b), "long before") {
		t.Errorf("the zombie's whole log is not kept in %s: %v", kept, err)
	}
}
