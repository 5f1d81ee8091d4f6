package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// envFile, in CLUSTER_DIR, holds what a shell or a test needs to reach the cluster:
// `set -a; . .data/cluster/cluster.env; set +a`.
const envFile = "cluster.env"

// kv is one variable, in the order it is written.
type kv struct{ Key, Value string }

// plainValue is a value the shell reads as written; anything else is single-quoted.
var plainValue = regexp.MustCompile(`^[A-Za-z0-9_./:,@%+=-]*$`)

// formatEnv writes vars as KEY=value lines a POSIX shell can source: a value with characters
// the shell would interpret is single-quoted (a quote inside it closes the quoting, is escaped
// with a backslash, and reopens it).
func formatEnv(header string, vars []kv) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n", header)
	for _, v := range vars {
		val := v.Value
		if !plainValue.MatchString(val) {
			val = "'" + strings.ReplaceAll(val, "'", `'\''`) + "'"
		}
		fmt.Fprintf(&b, "%s=%s\n", v.Key, val)
	}
	return b.String()
}

// writeEnv writes vars to path, readable by its owner only: the file holds the admin key, the
// callback secret and the codec keys.
func writeEnv(path, header string, vars []kv) error {
	if err := os.WriteFile(path, []byte(formatEnv(header, vars)), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// parseEnv reads what formatEnv wrote.
func parseEnv(text string) ([]kv, error) {
	var out []kv
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		if !ok || key == "" {
			return nil, fmt.Errorf("line %d: want KEY=value", n)
		}
		if len(val) >= 2 && val[0] == '\'' && val[len(val)-1] == '\'' {
			val = strings.ReplaceAll(val[1:len(val)-1], `'\''`, `'`)
		}
		out = append(out, kv{key, val})
	}
	return out, sc.Err()
}

// readEnv reads the env file at path into a map.
func readEnv(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	vars, err := parseEnv(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	m := map[string]string{}
	for _, v := range vars {
		m[v.Key] = v.Value
	}
	return m, nil
}
