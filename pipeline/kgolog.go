package pipeline

import (
	"context"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kgo"
)

// kgoLogger hands franz-go's logs to slog, at warn and above so that a busy
// group does not drown the pipeline's own lines; with the logger at debug,
// also franz-go's info lines (joins, syncs, heartbeat errors: the group's
// life as the client saw it).
type kgoLogger struct{ l *slog.Logger }

func (k kgoLogger) Level() kgo.LogLevel {
	if k.l.Enabled(context.Background(), slog.LevelDebug) {
		return kgo.LogLevelInfo
	}
	return kgo.LogLevelWarn
}

func (k kgoLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	lv := slog.LevelInfo
	switch level {
	case kgo.LogLevelError:
		lv = slog.LevelError
	case kgo.LogLevelWarn:
		lv = slog.LevelWarn
	case kgo.LogLevelDebug:
		lv = slog.LevelDebug
	}
	k.l.Log(context.Background(), lv, "kafka: "+msg, keyvals...)
}
