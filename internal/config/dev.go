package config

import (
	"errors"
	"fmt"
)

// DevStack is the dev stack's own configuration (`make dev`, starter/dev); every other process
// ignores it.
type DevStack struct {
	// LogLevel is the level of the stand-ins' logs — FerretDB, the Temporal dev server, kfake —
	// which are noise unless one of them is what you are debugging. taskloom's own logs follow
	// LOG_LEVEL.
	LogLevel string `env:"DEV_LOG_LEVEL" envDefault:"error"`
	// DataDir keeps the dev stack's state across restarts: FerretDB's SQLite files, the Temporal
	// dev server's database, the generated admin key and dev.env.
	DataDir string `env:"DEV_DATA_DIR" envDefault:".data"`
	// TemporalPort and TemporalUIPort place the Temporal dev server the stack starts when
	// TEMPORAL_ADDRESS is unset (temporal-dev.sh reads the same variables).
	TemporalPort   int `env:"TEMPORAL_PORT" envDefault:"7233"`
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
