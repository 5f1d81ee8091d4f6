package api

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"gopkg.in/yaml.v3"
)

// operation is one method of one path of the OpenAPI document, as the /docs/api page lists it.
type operation struct {
	Method, Path, Summary string
	Public                bool // security: [] — no API key
}

// specOperations lists the document's operations in the order the document gives them, so the
// page reads like the spec (yaml.v3's node tree keeps that order; a map would not).
func specOperations(spec []byte) (title string, ops []operation, err error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(spec, &doc); err != nil {
		return "", nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	if len(doc.Content) == 0 {
		return "", nil, fmt.Errorf("openapi.yaml: empty document")
	}
	root := doc.Content[0]
	title = scalar(child(child(root, "info"), "title"))
	paths := child(root, "paths")
	if paths == nil {
		return "", nil, fmt.Errorf("openapi.yaml: no paths")
	}
	for i := 0; i+1 < len(paths.Content); i += 2 {
		path, item := paths.Content[i].Value, paths.Content[i+1]
		for j := 0; j+1 < len(item.Content); j += 2 {
			method, op := item.Content[j].Value, item.Content[j+1]
			switch method {
			case "get", "put", "post", "delete", "patch", "head", "options":
			default:
				continue // parameters, summary and other path-level keys
			}
			sec := child(op, "security")
			ops = append(ops, operation{Method: strings.ToUpper(method), Path: path,
				Summary: scalar(child(op, "summary")), Public: sec != nil && len(sec.Content) == 0})
		}
	}
	return title, ops, nil
}

// child returns the value of key in a YAML mapping node, or nil.
func child(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func scalar(n *yaml.Node) string {
	if n == nil {
		return ""
	}
	return n.Value
}

var apiDocPage = template.Must(template.New("api").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>
body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:70rem;padding:0 1rem;color:#222}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.3rem .5rem;text-align:left;vertical-align:top}
code{font-size:.92em}.m{font-weight:600;font-family:monospace}.pub{color:#666}
</style></head><body>
<h1>{{.Title}}</h1>
<p>Every operation of <a href="/openapi.yaml">/openapi.yaml</a>, in the document's order. Open the
document in an OpenAPI tool (Swagger UI, Redoc, an editor plugin) for the request and response
schemas. Operations need an API key in <code>X-API-Key</code> or <code>Authorization: Bearer</code>
unless marked public.</p>
<table><thead><tr><th>method</th><th>path</th><th>summary</th><th></th></tr></thead><tbody>
{{range .Ops}}<tr><td class="m">{{.Method}}</td><td><code>{{.Path}}</code></td><td>{{.Summary}}</td><td class="pub">{{if .Public}}public{{end}}</td></tr>
{{end}}</tbody></table></body></html>
`))

// apiDocs renders the /docs/api page from spec once, at start: the spec is embedded in the
// binary, so the page cannot change while the process runs.
func apiDocs(spec []byte) (echo.HandlerFunc, error) {
	title, ops, err := specOperations(spec)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := apiDocPage.Execute(&b, struct {
		Title string
		Ops   []operation
	}{title, ops}); err != nil {
		return nil, fmt.Errorf("render /docs/api: %w", err)
	}
	page := b.Bytes()
	return func(c echo.Context) error { return c.HTMLBlob(http.StatusOK, page) }, nil
}
