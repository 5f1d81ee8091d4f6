// Package envfile reads and writes KEY=value files that a POSIX shell can source
// (`set -a; . FILE; set +a`): the cluster's cluster.env, which `make cluster` writes and the bench
// (BENCH_TARGET=cluster) and the cluster tests read.
package envfile

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// Var is one variable, in the order it is written.
type Var struct{ Key, Value string }

// plainValue is a value the shell reads as written; anything else is single-quoted.
var plainValue = regexp.MustCompile(`^[A-Za-z0-9_./:,@%+=-]*$`)

// Format writes vars as KEY=value lines a POSIX shell can source: a value with characters
// the shell would interpret is single-quoted (a quote inside it closes the quoting, is escaped
// with a backslash, and reopens it).
func Format(header string, vars []Var) string {
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

// Write writes vars to path, readable by its owner only: such a file holds keys and secrets.
func Write(path, header string, vars []Var) error {
	if err := os.WriteFile(path, []byte(Format(header, vars)), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Parse reads what Format wrote.
func Parse(text string) ([]Var, error) {
	var out []Var
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
		out = append(out, Var{key, val})
	}
	return out, sc.Err()
}

// Read reads the file at path into a map.
func Read(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	vars, err := Parse(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	m := map[string]string{}
	for _, v := range vars {
		m[v.Key] = v.Value
	}
	return m, nil
}
