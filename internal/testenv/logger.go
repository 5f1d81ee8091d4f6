package testenv

import (
	"log/slog"
	"os"

	tlog "go.temporal.io/sdk/log"
)

// quietLogger keeps the SDK's info lines out of test output; TESTENV_VERBOSE=1 shows them.
func quietLogger() tlog.Logger {
	level := slog.LevelWarn
	if os.Getenv("TESTENV_VERBOSE") != "" {
		level = slog.LevelDebug
	}
	return tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})))
}
