package check

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

var chartDir = filepath.Join("..", "helm", "taskloom")

// rendered is one rendering of the chart, its manifests decoded by kind.
type rendered struct {
	kinds       map[string]int
	deployments map[string]*appsv1.Deployment // by app.kubernetes.io/component
	jobs        []*batchv1.Job
	services    []*corev1.Service
	raw         string
}

// everythingOn turns on every optional part of the chart, so the checks see all of it.
var everythingOn = map[string]any{
	"codecServer":    map[string]any{"enabled": true, "corsOrigins": "https://temporal.example.com"},
	"serviceMonitor": map[string]any{"enabled": true},
	"temporalTLS":    map[string]any{"secretName": "temporal-mtls"},
}

// render renders the chart as `helm template tl deploy/helm/taskloom` would, with overrides.
func render(t *testing.T, overrides map[string]any) *rendered {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("load chart: %v", err)
	}
	if err := ch.Validate(); err != nil {
		t.Fatalf("chart: %v", err)
	}
	vals, err := chartutil.ToRenderValues(ch, overrides,
		chartutil.ReleaseOptions{Name: "tl", Namespace: "taskloom", Revision: 1, IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatalf("values: %v", err)
	}
	files, err := engine.Render(ch, vals)
	if err != nil {
		t.Fatalf("render chart: %v", err)
	}
	r := &rendered{kinds: map[string]int{}, deployments: map[string]*appsv1.Deployment{}}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !strings.HasSuffix(name, ".yaml") {
			continue
		}
		for _, doc := range releaseutil.SplitManifests(files[name]) {
			if err := r.add(doc); err != nil {
				t.Fatalf("%s: %v\n%s", name, err, doc)
			}
		}
	}
	return r
}

func (r *rendered) add(doc string) error {
	var head struct {
		Kind     string
		Metadata struct{ Labels map[string]string }
	}
	if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
		return fmt.Errorf("not YAML: %w", err)
	}
	if head.Kind == "" {
		return nil // a template that rendered nothing
	}
	r.kinds[head.Kind]++
	r.raw += "---\n" + doc + "\n"
	var target any
	switch head.Kind {
	case "Deployment":
		d := &appsv1.Deployment{}
		r.deployments[head.Metadata.Labels["app.kubernetes.io/component"]] = d
		target = d
	case "Job":
		j := &batchv1.Job{}
		r.jobs = append(r.jobs, j)
		target = j
	case "Service":
		s := &corev1.Service{}
		r.services = append(r.services, s)
		target = s
	default:
		return nil
	}
	// Strict: a field Kubernetes does not know (a typo, a wrong indentation) fails here.
	return yaml.UnmarshalStrict([]byte(doc), target)
}

// containers is every container of every workload, init containers included, by a readable name.
func (r *rendered) containers() map[string]corev1.Container {
	out := map[string]corev1.Container{}
	for comp, d := range r.deployments {
		for _, c := range d.Spec.Template.Spec.Containers {
			out["deployment "+comp+"/"+c.Name] = c
		}
	}
	for _, j := range r.jobs {
		spec := j.Spec.Template.Spec
		for _, c := range append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...) {
			out["job "+j.Name+"/"+c.Name] = c
		}
	}
	return out
}

func envOf(c corev1.Container) map[string]corev1.EnvVar {
	out := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		out[e.Name] = e
	}
	return out
}
