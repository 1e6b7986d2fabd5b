package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
)

// spawn runs one worker process for spec and completes its result with the
// CPU time and peak RSS the operating system recorded for it.
func spawn(ctx context.Context, cfg Config, spec Spec) (Result, error) {
	js, err := json.Marshal(spec)
	if err != nil {
		return Result{}, fmt.Errorf("bench: encode spec: %w", err)
	}
	cmd := exec.CommandContext(ctx, cfg.Exe, append(append([]string(nil), cfg.Args...), string(js))...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, cfg.Stderr
	if err := cmd.Run(); err != nil {
		return Result{}, fmt.Errorf("bench: %s worker: %w", spec.Mode, err)
	}
	var res Result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return Result{}, fmt.Errorf("bench: %s worker said %.200q: %w", spec.Mode, out.String(), err)
	}
	st := cmd.ProcessState
	res.CPUSeconds = (st.UserTime() + st.SystemTime()).Seconds()
	if res.MaxRSSMB == 0 {
		res.MaxRSSMB = maxRSSMB(st)
	}
	return res, nil
}
