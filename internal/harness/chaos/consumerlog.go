package chaos

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

// waitStarted waits until the log says the pipeline started (from then on
// SIGTERM means a graceful stop), at most d.
func (c *consumer) waitStarted(d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		if b, err := os.ReadFile(c.logPath); err == nil && strings.Contains(string(b), `"msg":"pipeline starting"`) {
			return nil
		}
		if c.exited() {
			return fmt.Errorf("%s exited before its pipeline started (%v)", c, c.err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: no \"pipeline starting\" in its log after %v", c, d)
		}
		time.Sleep(50 * time.Millisecond) // polls the log file; there is no event to wait on
	}
}

// logFacts is what a consumer's JSON log says: its final summary (absent
// after SIGKILL) and the epochs of its assignments.
type logFacts struct {
	summary *figures
	epochs  []int64
}

func readLog(path string) (logFacts, error) {
	f, err := os.Open(path)
	if err != nil {
		return logFacts{}, err
	}
	defer f.Close()
	var lf logFacts
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m struct {
			Msg        string `json:"msg"`
			Epoch      *int64 `json:"epoch"`
			Suppressed int64  `json:"suppressed"`
			Fenced     int64  `json:"fenced_commits"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		switch m.Msg {
		case "summary":
			lf.summary = &figures{suppressed: m.Suppressed, fenced: m.Fenced}
		case "partitions assigned":
			if m.Epoch != nil {
				lf.epochs = append(lf.epochs, *m.Epoch)
			}
		}
	}
	return lf, sc.Err()
}

// logSize is how many bytes the consumer's log holds now.
func (c *consumer) logSize() int64 {
	fi, err := os.Stat(c.logPath)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// waitLog waits until the consumer's log, from byte from on, holds a JSON
// line whose msg is one of msgs, at most d; it returns that msg, or "".
func (c *consumer) waitLog(ctx context.Context, from int64, d time.Duration, msgs ...string) string {
	deadline := time.Now().Add(d)
	for {
		if b, err := os.ReadFile(c.logPath); err == nil && int64(len(b)) > from {
			for _, line := range strings.Split(string(b[from:]), "\n") {
				var m struct {
					Msg string `json:"msg"`
				}
				if json.Unmarshal([]byte(line), &m) == nil && slices.Contains(msgs, m.Msg) {
					return m.Msg
				}
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return ""
		}
		time.Sleep(50 * time.Millisecond) // polls the log file; there is no event to wait on
	}
}

// member is the group member ID of c's latest assignment, from its log
// ("" when none is logged).
func (c *consumer) member() string {
	f, err := os.Open(c.logPath)
	if err != nil {
		return ""
	}
	defer f.Close()
	member := ""
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m struct {
			Msg    string `json:"msg"`
			Member string `json:"member"`
		}
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.Msg == "partitions assigned" && m.Member != "" {
			member = m.Member
		}
	}
	return member
}
