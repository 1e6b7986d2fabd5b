package chaos

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/shardpipe/shardpipe/internal/harness/chaoscheck"
)

// moment is a time span of the run worth reading the consumers' logs at
// when the pass fails: a fault without an effect, a decrease in the commit
// log. c nil: every consumer whose log names one of members (every
// consumer when members is empty).
type moment struct {
	why      string
	c        *consumer
	members  []string
	from, to time.Time
}

// evidenceLines caps the lines shown of one consumer's log per moment.
const evidenceLines = 60

// keepEvidence, for a pass that broke a promise, copies every consumer's
// log out of the work directory (which a test removes) into a directory
// that stays, says where, and prints each consumer's log lines around each
// moment, so that the test output alone can diagnose the failure.
func (r *runner) keepEvidence(rep chaoscheck.Report) {
	moments := append([]moment(nil), r.moments...)
	for _, d := range rep.LoggedDecreases {
		from := d.Before.At.Add(-2 * time.Second)
		if to := d.After.At.Add(-15 * time.Second); from.Before(to) {
			from = to
		}
		moments = append(moments, moment{
			why:     fmt.Sprintf("partition %d: %s, then %s", d.Partition, d.Before, d.After),
			members: []string{d.Before.Member, d.After.Member}, from: from, to: d.After.At.Add(time.Second)})
	}
	dir, err := os.MkdirTemp("", "shardpipe-chaos-"+r.group+"-")
	if err == nil {
		for _, c := range r.all {
			if cerr := copyFile(c.logPath, filepath.Join(dir, filepath.Base(c.logPath))); cerr != nil && err == nil {
				err = cerr
			}
		}
	}
	if err != nil {
		r.logf("could not keep the consumers' logs: %v", err)
	} else {
		r.logf("the pass broke a promise: the consumers' logs are kept in %s", dir)
	}
	for _, m := range moments {
		r.logf("evidence: %s; consumer logs from %s to %s:", m.why, m.from.UTC().Format("15:04:05.000"),
			m.to.UTC().Format("15:04:05.000"))
		for _, c := range r.all {
			if m.c != nil && c != m.c {
				continue
			}
			lines, names := logWindow(c.logPath, m.from, m.to, m.members)
			if m.c == nil && len(m.members) > 0 && !names {
				continue
			}
			for _, l := range lines {
				fmt.Fprintf(r.cfg.Out, "  %s: %s\n", c, l)
			}
		}
	}
}

// logWindow returns the lines of a consumer's JSON log timed within
// [from, to] (the first and the last evidenceLines/2 of them), and whether
// the log names one of members anywhere.
func logWindow(path string, from, to time.Time, members []string) ([]string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return []string{fmt.Sprintf("(log unreadable: %v)", err)}, false
	}
	defer f.Close()
	var out []string
	names := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		for _, m := range members {
			if m != "" && strings.Contains(line, m) {
				names = true
			}
		}
		var l struct {
			Time time.Time `json:"time"`
		}
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.Time.Before(from) || l.Time.After(to) {
			continue
		}
		out = append(out, line)
	}
	if n := len(out); n > evidenceLines {
		h := evidenceLines / 2
		out = append(append(out[:h:h], fmt.Sprintf("(%d lines left out)", n-2*h)), out[n-h:]...)
	}
	return out, names
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
