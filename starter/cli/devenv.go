package cli

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"
)

// DevEnvFile is where the dev stack (`make dev`) writes the addresses it chose, as KEY='value'
// lines.
const DevEnvFile = ".data/dev.env"

// loadDevEnv sets every variable of ./.data/dev.env that the environment leaves unset, when
// taskloom runs in dev (TASKLOOM_ENV unset or dev) and the file exists: a command run in a second
// shell then reaches the servers `make dev` started. It returns the file it read, or "".
func loadDevEnv() (string, error) {
	if env := os.Getenv("TASKLOOM_ENV"); env != "" && env != "dev" {
		return "", nil
	}
	f, err := os.Open(DevEnvFile)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the dev stack's settings: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		if !ok {
			return "", fmt.Errorf("%s:%d: want KEY='value'", DevEnvFile, n)
		}
		if _, set := os.LookupEnv(key); set {
			continue
		}
		if err := os.Setenv(key, unquote(val)); err != nil {
			return "", fmt.Errorf("%s:%d: %w", DevEnvFile, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("read %s: %w", DevEnvFile, err)
	}
	return DevEnvFile, nil
}

// unquote undoes the dev stack's single quoting (a quote inside a value is closed, escaped with
// a backslash and reopened).
func unquote(v string) string {
	if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
		return strings.ReplaceAll(v[1:len(v)-1], `'\''`, `'`)
	}
	return v
}
