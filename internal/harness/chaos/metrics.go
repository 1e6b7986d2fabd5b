package chaos

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strconv"
	"strings"
)

// scrape reads the process's suppressed and fenced counters from its
// metrics endpoint; a process that is paused or gone keeps its last figures.
func (c *consumer) scrape(ctx context.Context, hc *http.Client) {
	addr := c.metrics()
	if addr == "" {
		return // not serving yet
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
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

// metrics returns the address the process serves metrics on, from the
// "serving Prometheus metrics" line of its log; "" until it has logged it.
func (c *consumer) metrics() string {
	c.mu.Lock()
	addr := c.metricsAddr
	c.mu.Unlock()
	if addr != "" {
		return addr
	}
	f, err := os.Open(c.logPath)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		var m struct {
			Msg  string `json:"msg"`
			Addr string `json:"addr"`
		}
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.Msg == "serving Prometheus metrics" && m.Addr != "" {
			c.mu.Lock()
			c.metricsAddr = m.Addr
			c.mu.Unlock()
			return m.Addr
		}
	}
	return ""
}
