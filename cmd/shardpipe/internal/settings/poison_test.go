package settings

import (
	"testing"

	"github.com/shardpipe/shardpipe/pipeline"
)

func TestPoisonGroup(t *testing.T) {
	tests := []struct {
		args  []string
		want  []string
		check func(Poison) bool
	}{
		{nil, nil, func(p Poison) bool {
			return p.DeadLetter && p.Topic == "" && p.Prefix == "shardpipe:" && p.Attempts == 3 && p.MaxRun == pipeline.DefaultDeadLetterMaxRun &&
				p.MaxShare == pipeline.DefaultDeadLetterMaxShare && p.Window == pipeline.DefaultDeadLetterWindow
		}},
		{[]string{"--on-poison=stop", "--dlq-topic= bad ", "--poison-attempts=100", "--dlq-max-run=0", "--dlq-max-share=0"}, nil, func(p Poison) bool {
			return !p.DeadLetter && p.Topic == "bad" && p.Attempts == 100 && p.MaxRun == 0 && p.MaxShare == 0
		}},
		{[]string{"--on-poison=skip", "--poison-attempts=0", "--dlq-max-run=-1", "--dlq-max-share=1.5", "--dlq-window=0"}, []string{
			`--on-poison (SHARDPIPE_ON_POISON) "skip": want dlq or stop`, "--dlq-max-run (SHARDPIPE_DLQ_MAX_RUN) -1: want 0 to 1000000 (0: no bound)",
			"--dlq-max-share (SHARDPIPE_DLQ_MAX_SHARE) 1.5: want 0 to 1 (0: no bound)", "--dlq-window (SHARDPIPE_DLQ_WINDOW) 0: want 1 to 100000 (records)",
			"--poison-attempts (SHARDPIPE_POISON_ATTEMPTS) 0: want 1 to 100"}, nil},
		{[]string{"--poison-attempts=101"}, []string{"want 1 to 100"}, nil},
		{[]string{"--dlq-topic=orders"}, []string{`--dlq-topic (SHARDPIPE_DLQ_TOPIC) "orders": also consumed (--topic (SHARDPIPE_TOPIC))`}, nil},
		{[]string{"--dlq-topic=a/b"}, []string{`--dlq-topic (SHARDPIPE_DLQ_TOPIC) "a/b": `}, nil},
		{[]string{"--dlq-prefix="}, []string{"--dlq-prefix (SHARDPIPE_DLQ_PREFIX): empty"}, nil},
	}
	for _, tt := range tests {
		p := Poison{CreateDLQ: true}
		bad := load(t, PoisonGroup(&p, func() []string { return []string{"orders"} }), tt.args...)
		checkProblems(t, tt.args, bad, tt.want...)
		if tt.check != nil && !tt.check(p) {
			t.Errorf("%q: loaded %+v", tt.args, p)
		}
		if !p.CreateDLQ {
			t.Errorf("%q: CreateDLQ cleared; it is the caller's", tt.args)
		}
	}
	if k := FenceKey("s:"); k != "s:fence" {
		t.Errorf("FenceKey: %q", k)
	}
	if n := len((Poison{Attempts: 2}).Options(nil, 0)); n != 1 {
		t.Errorf("stop: %d options, want PoisonAttempts only", n)
	}
	if n := len((Poison{Attempts: 2, DeadLetter: true, Window: 1}).Options(nil, 0)); n != 2 {
		t.Errorf("dlq: %d options, want PoisonAttempts and DeadLetters", n)
	}
}
