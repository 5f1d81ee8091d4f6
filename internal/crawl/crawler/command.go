package crawler

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Placeholders a crawler command template may use.
const (
	PlaceholderID      = "{id}"      // the original task id
	PlaceholderBrokers = "{brokers}" // Kafka brokers, comma separated
	PlaceholderSelf    = "{self}"    // this program's executable
)

// SplitCommand splits a command template into arguments the way a POSIX
// shell would for the simple cases (whitespace, '...', "...", backslash),
// without running a shell: the crawler is started directly, so nothing in a
// task id or broker list can be interpreted as shell syntax.
func SplitCommand(s string) ([]string, error) {
	var (
		args    []string
		cur     strings.Builder
		inArg   bool
		quote   rune
		escaped bool
	)
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\\':
			escaped, inArg = true, true
		case quote == '"':
			if r == '"' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inArg = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteRune(r)
			inArg = true
		}
	}
	switch {
	case escaped:
		return nil, errors.New("command ends with a lone backslash")
	case quote != 0:
		return nil, fmt.Errorf("command has an unterminated %c quote", quote)
	}
	if inArg {
		args = append(args, cur.String())
	}
	if len(args) == 0 {
		return nil, errors.New("command is empty")
	}
	return args, nil
}

// CommandVars are the values substituted into a crawler command template.
type CommandVars struct {
	OriginalTaskID int64
	Brokers        []string
	Self           string
}

// BuildCommand splits template and substitutes the placeholders in each
// argument. The template must mention {id}: the crawler takes the original
// task id as --original-task-id and cannot report progress for a task it was
// not told about.
func BuildCommand(template string, v CommandVars) ([]string, error) {
	if !strings.Contains(template, PlaceholderID) {
		return nil, fmt.Errorf("crawler command %q does not pass %s", template, PlaceholderID)
	}
	args, err := SplitCommand(template)
	if err != nil {
		return nil, fmt.Errorf("crawler command %q: %w", template, err)
	}
	r := strings.NewReplacer(
		PlaceholderID, strconv.FormatInt(v.OriginalTaskID, 10),
		PlaceholderBrokers, strings.Join(v.Brokers, ","),
		PlaceholderSelf, v.Self,
	)
	for i, a := range args {
		args[i] = r.Replace(a)
	}
	return args, nil
}
