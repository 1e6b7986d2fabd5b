package chaos

import (
	"bufio"
	"context"
	"net/http"
	"strconv"
	"strings"
)

// scrape reads the process's suppressed and fenced counters from its
// metrics endpoint; a process that is paused or gone keeps its last figures.
func (c *consumer) scrape(ctx context.Context, hc *http.Client) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+c.metricsAddr+"/metrics", nil)
	if err != nil {
		return
	}
	resp, err := hc.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	var f figures
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, val, ok := metricLine(sc.Text())
		switch {
		case !ok:
		case name == "shardpipe_effects_suppressed_total":
			f.suppressed += int64(val)
		case name == "shardpipe_commits_fenced_total":
			f.fenced += int64(val)
		case name == "shardpipe_uncommitted_records":
			f.uncommitted += int64(val)
		}
	}
	if sc.Err() != nil {
		return
	}
	c.mu.Lock()
	c.scraped = f
	c.mu.Unlock()
}

// metricLine splits a Prometheus text line `name{labels} value`.
func metricLine(s string) (string, float64, bool) {
	if strings.HasPrefix(s, "#") {
		return "", 0, false
	}
	sp := strings.LastIndexByte(s, ' ')
	if sp < 0 {
		return "", 0, false
	}
	v, err := strconv.ParseFloat(s[sp+1:], 64)
	if err != nil {
		return "", 0, false
	}
	name := s[:sp]
	if i := strings.IndexByte(name, '{'); i >= 0 {
		name = name[:i]
	}
	return name, v, true
}
