package opshttp

import (
	_ "embed"
	"encoding/json"
	"net/http"
	"time"

	"github.com/shardpipe/shardpipe/metrics"
)

// Status is the status page's data, served at /status.json.
type Status struct {
	Group      string            `json:"group"`      // the consumer group (the Group option)
	Member     string            `json:"member"`     // this process's member ID; "" before joining
	Generation int32             `json:"generation"` // generation or member epoch of its latest assignment
	Running    bool              `json:"running"`    // the pipeline has not stopped on an error
	Error      string            `json:"error"`      // the error that stopped it, if any
	Partitions []PartitionStatus `json:"partitions"` // each partition this process has held, by topic and partition
	Time       time.Time         `json:"time"`       // when the status was taken
}

// PartitionStatus is one partition's row on the status page.
type PartitionStatus struct {
	Topic         string    `json:"topic"`          // the partition's topic
	Partition     int32     `json:"partition"`      // its number
	Owner         string    `json:"owner"`          // this process's member ID while it holds it, else ""
	Epoch         int64     `json:"epoch"`          // fencing epoch of its latest term here
	Committed     int64     `json:"committed"`      // last offset this process committed (-1: none)
	StableOffset  int64     `json:"stable_offset"`  // last stable offset from the latest fetch (-1: none)
	Lag           *int64    `json:"lag"`            // metrics.Lag; null when unknown
	Applied       int64     `json:"applied"`        // pipeline.PartitionStats.Applied
	Suppressed    int64     `json:"suppressed"`     // pipeline.PartitionStats.Suppressed
	DeadLettered  int64     `json:"dead_lettered"`  // pipeline.PartitionStats.DeadLettered
	FencedCommits int64     `json:"fenced_commits"` // pipeline.PartitionStats.Fenced
	LastError     string    `json:"last_error"`     // the latest failed sink call or commit, "" for none
	LastErrorAt   time.Time `json:"last_error_at"`  // when; zero for none
}

// Status returns the status page's data. It costs one Stats call.
func (p *Probe) Status() Status {
	member, gen := p.src.GroupMetadata()
	st := Status{Group: p.group, Member: member, Generation: gen, Running: true, Time: p.now().UTC()}
	if err := p.src.Err(); err != nil {
		st.Running, st.Error = false, err.Error()
	}
	for _, s := range p.src.Stats() {
		ps := PartitionStatus{Topic: s.Partition.Topic, Partition: s.Partition.Partition, Epoch: s.Epoch,
			Committed: s.Committed, StableOffset: s.StableOffset, Applied: s.Applied, Suppressed: s.Suppressed,
			DeadLettered: s.DeadLettered, FencedCommits: s.Fenced, LastError: s.LastError, LastErrorAt: s.LastErrorAt}
		if s.Held {
			ps.Owner = member
		}
		if lag, ok := metrics.Lag(s); ok {
			ps.Lag = &lag
		}
		st.Partitions = append(st.Partitions, ps)
	}
	return st
}

//go:embed status.html
var statusPage []byte

func (p *Probe) serveStatus(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(statusPage)
}

func (p *Probe) serveStatusJSON(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(p.Status())
}
