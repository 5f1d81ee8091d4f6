// Package logging builds the process logger: slog JSON on stderr, also handed to the Temporal
// SDK so workflow and activity lines share one format.
package logging

import (
	"io"
	"log/slog"
	"os"

	tlog "go.temporal.io/sdk/log"
)

// New returns a JSON logger at the given level name (debug|info|warn|error).
func New(level string) *slog.Logger {
	return NewTo(os.Stderr, level)
}

// NewTo is New writing to w.
func NewTo(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l}))
}

// Temporal adapts a slog logger to the SDK's logger interface.
func Temporal(l *slog.Logger) tlog.Logger {
	return tlog.NewStructuredLogger(l)
}
