package config

import (
	"errors"
	"fmt"
)

// DevStack is the dev stack's own configuration (`make dev`, starter/dev); every other process
// ignores it.
type DevStack struct {
	// Dev stack only: level of the stand-ins' logs (FerretDB, the Temporal dev server); `debug` shows
	// them all. taskloom's own logs follow `LOG_LEVEL`.
	LogLevel string `env:"DEV_LOG_LEVEL" envDefault:"error"`
	// Dev stack only: where its state is kept across restarts (FerretDB files, `temporal.db`,
	// `admin-key`, `dev.env`).
	DataDir string `env:"DEV_DATA_DIR" envDefault:".data"`
	// Dev stack only: gRPC port of the Temporal dev server it starts when `TEMPORAL_ADDRESS` is unset.
	TemporalPort int `env:"TEMPORAL_PORT" envDefault:"7233"`
	// Dev stack only: Web UI port of the Temporal dev server it starts when `TEMPORAL_ADDRESS` is unset.
	TemporalUIPort int `env:"TEMPORAL_UI_PORT" envDefault:"8233"`
}

func (c *DevStack) validate() error {
	var errs []error
	if err := oneOf(c.LogLevel, "debug", "info", "warn", "error"); err != nil {
		errs = append(errs, fmt.Errorf("DEV_LOG_LEVEL: %w", err))
	}
	for name, p := range map[string]int{"TEMPORAL_PORT": c.TemporalPort, "TEMPORAL_UI_PORT": c.TemporalUIPort} {
		if p < 1 || p > 65535 {
			errs = append(errs, fmt.Errorf("%s: %d is not a port (1-65535)", name, p))
		}
	}
	return errors.Join(errs...)
}
