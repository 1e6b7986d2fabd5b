package opshttp

import (
	"encoding/json"
	"net/http"
)

// Handler serves /healthz and /readyz (a Report as JSON: 200 when OK, 503
// when not) and the status page, /status and /status.json. Mount it at the
// root of a mux, next to /metrics.
func (p *Probe) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { writeReport(w, p.Live()) })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) { writeReport(w, p.Ready(r.Context())) })
	mux.HandleFunc("GET /status", p.serveStatus)
	mux.HandleFunc("GET /status.json", p.serveStatusJSON)
	return mux
}

func writeReport(w http.ResponseWriter, r Report) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if !r.OK {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_ = json.NewEncoder(w).Encode(r)
}
