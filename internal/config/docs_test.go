package config

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// Every variable the configuration reads must be documented in README.md's configuration
// table and listed in .env.example, so the docs cannot fall behind the code.
func TestEveryVariableIsDocumented(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile("../../.env.example")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range allEnvNames(reflect.TypeOf(Config{})) {
		if !strings.Contains(string(readme), name) && !documentedAsFamily(string(readme), name) {
			t.Errorf("%s is not in README.md", name)
		}
		if !strings.Contains(string(example), "\n"+name+"=") {
			t.Errorf("%s is not in .env.example", name)
		}
	}
}

// documentedAsFamily accepts a family row such as `WEBHOOK_FIELD_{BIZTYPE,STATUS}` for
// WEBHOOK_FIELD_STATUS.
func documentedAsFamily(readme, name string) bool {
	i := strings.LastIndex(name, "_")
	for i > 0 {
		prefix, rest := name[:i+1], name[i+1:]
		for _, row := range strings.Split(readme, prefix+"{")[1:] {
			if end := strings.Index(row, "}"); end > 0 {
				for _, member := range strings.Split(row[:end], ",") {
					if strings.TrimSpace(member) == rest {
						return true
					}
				}
			}
		}
		i = strings.LastIndex(name[:i], "_")
	}
	return false
}

func allEnvNames(t reflect.Type) []string {
	var names []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := strings.SplitN(f.Tag.Get("env"), ",", 2)[0]
		if f.Type.Kind() == reflect.Struct && tag == "" {
			names = append(names, allEnvNames(f.Type)...)
			continue
		}
		if tag != "" {
			names = append(names, tag)
		}
	}
	return names
}
