package faults_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/taskloom/taskloom/internal/testenv"
)

// schema is the part of an OpenAPI schema the bad-input generator uses.
type schema struct {
	Ref        string             `yaml:"$ref"`
	Type       string             `yaml:"type"`
	Enum       []any              `yaml:"enum"`
	Required   []string           `yaml:"required"`
	Properties map[string]*schema `yaml:"properties"`
	Items      *schema            `yaml:"items"`
}

type operation struct {
	RequestBody *struct {
		Content map[string]struct {
			Schema *schema `yaml:"schema"`
		} `yaml:"content"`
	} `yaml:"requestBody"`
}

type spec struct {
	Paths      map[string]map[string]operation `yaml:"paths"`
	Components struct {
		Schemas map[string]*schema `yaml:"schemas"`
	} `yaml:"components"`
}

// loadSpec reads api/openapi.yaml, which every route must be in (api/server_test.go).
func loadSpec(t testing.TB) *spec {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "api", "openapi.yaml"))
	if err != nil {
		t.Fatalf("read openapi.yaml: %v", err)
	}
	var s spec
	if err := yaml.Unmarshal(b, &s); err != nil {
		t.Fatalf("parse openapi.yaml: %v", err)
	}
	return &s
}

var echoParam = regexp.MustCompile(`:([A-Za-z_]+)`)

// bodySchema is the JSON request body schema of an Echo route, or nil when the spec gives none.
func (s *spec) bodySchema(r route) *schema {
	ops, ok := s.Paths[echoParam.ReplaceAllString(r.path, "{$1}")]
	if !ok {
		return nil
	}
	op, ok := ops[strings.ToLower(r.method)]
	if !ok || op.RequestBody == nil {
		return nil
	}
	return s.resolve(op.RequestBody.Content["application/json"].Schema)
}

func (s *spec) resolve(sc *schema) *schema {
	for sc != nil && sc.Ref != "" {
		sc = s.Components.Schemas[strings.TrimPrefix(sc.Ref, "#/components/schemas/")]
	}
	return sc
}

// sortedProps lists a schema's properties in a stable order.
func sortedProps(sc *schema) []string {
	var names []string
	for n := range sc.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// wrongValue is a JSON value of a type the property does not accept. Strings get the NoSQL
// operator object, so an id that reached a query as-is would match every document.
func wrongValue(sc *schema) any {
	switch sc.Type {
	case "string":
		return map[string]any{"$gt": ""}
	case "integer", "number":
		return "12abc"
	case "boolean":
		return "yes"
	case "array":
		return map[string]any{"$ne": nil}
	case "object":
		return "not-an-object"
	}
	return nil
}

// plausible is a well-typed value for a property, used to fill the required fields around the
// one field a case breaks, so the break is what the handler has to notice.
func plausible(s *spec, sc *schema) any {
	sc = s.resolve(sc)
	if sc == nil {
		return "fault-probe"
	}
	if len(sc.Enum) > 0 {
		return sc.Enum[0]
	}
	switch sc.Type {
	case "integer", "number":
		return 1
	case "boolean":
		return false
	case "array":
		return []any{}
	case "object":
		return map[string]any{}
	}
	return "fault-probe"
}

// withRequired returns a body holding plausible values for sc's required fields plus extra.
func withRequired(s *spec, sc *schema, field string, value any) map[string]any {
	body := map[string]any{}
	for _, name := range sc.Required {
		body[name] = plausible(s, sc.Properties[name])
	}
	body[field] = value
	return body
}
