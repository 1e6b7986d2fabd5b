package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/httpeffect"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// The guard-mode modes: the pipeline in guard mode with the HTTP effect
// (httpeffect, as `run --effect http`), against a receiver that the bench
// process serves (so the worker's CPU is the consumer's alone) and that
// answers each call after a delay.
const (
	GuardSeq      Mode = "guard-seq"      // (g) guard mode, MaxInFlight 1, delayed receiver
	GuardInFlight Mode = "guard-inflight" // (h) guard mode, MaxInFlight, delayed receiver
	GuardFast     Mode = "guard-0ms"      // (i) guard mode, MaxInFlight, receiver answering at once
)

// guardModes are the guard-mode modes, in their order in the table.
var guardModes = []Mode{GuardSeq, GuardInFlight, GuardFast}

func isGuard(m Mode) bool { return m == GuardSeq || m == GuardInFlight || m == GuardFast }

// guardTopic is the topic of the guard modes: GuardRecords orders in
// GuardPartitions partitions (the sequential rate grows with partitions,
// the in-flight one with the machine: the ratio is per partition).
func (c Config) guardTopic() string { return fmt.Sprintf("%s-guard-%dp", c.Topic, c.GuardPartitions) }

// guardSpec completes spec for guard mode m: its topic, receiver URL (with
// the delay the receiver waits), MaxInFlight and record count. The
// sequential mode (MaxInFlight 1) processes a twentieth of GuardRecords
// (the target ratio), so that each mode takes about as long.
func (c Config) guardSpec(spec Spec, receiver string) Spec {
	delay := c.GuardDelay
	spec.Topic, spec.Records, spec.MaxInFlight = c.guardTopic(), c.GuardRecords, c.GuardInFlight
	switch spec.Mode {
	case GuardSeq:
		spec.Records, spec.MaxInFlight = max(c.GuardRecords/20, 50), 1
	case GuardFast:
		delay = 0
	}
	spec.URL = fmt.Sprintf("http://%s/effect?delay=%s", receiver, delay)
	return spec
}

// guardApplier is guard mode with the HTTP effect posting to spec.URL.
func guardApplier(rdb redis.UniversalClient, spec Spec) (pipeline.Applier, error) {
	eff, err := httpeffect.New(spec.URL)
	if err != nil {
		return nil, err
	}
	g, err := sink.NewGuard(rdb, sink.WithPrefix(spec.Prefix), sink.WithTTL(spec.TTL))
	if err != nil {
		return nil, err
	}
	return pipeline.Guarded(g, eff.Do), nil
}

// receiver is the bench's HTTP receiver: it answers each POST 204 after
// the delay its query says (?delay=20ms).
type receiver struct {
	srv  *http.Server
	addr string
	done chan error
}

func startReceiver() (*receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("bench: guard-mode receiver: %w", err)
	}
	rc := &receiver{addr: ln.Addr().String(), done: make(chan error, 1),
		srv: &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(answer)}}
	go func() { rc.done <- rc.srv.Serve(ln) }()
	return rc, nil
}

func answer(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	if d, err := time.ParseDuration(r.URL.Query().Get("delay")); err == nil && d > 0 {
		t := time.NewTimer(d) // the service's latency
		select {
		case <-t.C:
		case <-r.Context().Done():
		}
		t.Stop()
	}
	w.WriteHeader(http.StatusNoContent)
}

func (rc *receiver) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := rc.srv.Shutdown(ctx)
	if serr := <-rc.done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}
