package config

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
)

// docs/configuration.md is generated from this package (go generate ./internal/config): a variable
// added without a doc comment, or a change the page does not show yet, fails here.
func TestConfigurationPageIsGenerated(t *testing.T) {
	want, err := Reference(".")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("docs/configuration.md differs from the configuration in internal/config: run `go generate ./internal/config`\n%s", firstDiff(string(got), want))
	}
}

// Every variable the configuration reads is listed in .env.example, the file an operator copies.
func TestEveryVariableIsInEnvExample(t *testing.T) {
	example, err := os.ReadFile("../../.env.example")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range allEnvNames(reflect.TypeOf(Config{})) {
		if !strings.Contains(string(example), "\n"+name+"=") {
			t.Errorf("%s is not in .env.example", name)
		}
	}
}

// A variable's meaning is its own field's doc comment; a field without one has none (and Reference
// then refuses to render the page).
func TestFieldDocsReadsEachFieldsOwnComment(t *testing.T) {
	docs, err := fieldDocs(".")
	if err != nil {
		t.Fatal(err)
	}
	if docs["Pipeline.BreakerCooldownMax"] == "" || docs["Config.Env"] == "" {
		t.Fatalf("field docs not read: %d entries", len(docs))
	}
	dir := t.TempDir()
	src := "package config\n\ntype Config struct {\n\t// Documented.\n\tA string `env:\"A\"`\n\tB string `env:\"B\"`\n}\n"
	if err := os.WriteFile(dir+"/x.go", []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	docs, err = fieldDocs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if docs["Config.A"] != "Documented." || docs["Config.B"] != "" {
		t.Fatalf("docs = %q", docs)
	}
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d:\n  page: %s\n  code: %s", i+1, gl, wl)
		}
	}
	return ""
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
