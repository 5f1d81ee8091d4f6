package check

import (
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/taskloom/taskloom/internal/config"
)

func TestChartRendersEveryPart(t *testing.T) {
	def := render(t, nil)
	for kind, n := range map[string]int{"Deployment": 2, "Service": 2, "PodDisruptionBudget": 2, "HorizontalPodAutoscaler": 1, "Job": 1} {
		if def.kinds[kind] != n {
			t.Errorf("default values render %d %s, want %d (%v)", def.kinds[kind], kind, n, def.kinds)
		}
	}
	if def.kinds["ServiceMonitor"] != 0 || def.deployments["codec-server"] != nil {
		t.Error("optional parts render by default")
	}
	all := render(t, everythingOn)
	if all.kinds["ServiceMonitor"] != 1 || all.deployments["codec-server"] == nil {
		t.Errorf("everything on renders %v", all.kinds)
	}
	job := def.jobs[0]
	if hook := job.Annotations["helm.sh/hook"]; !strings.Contains(hook, "pre-install") || !strings.Contains(hook, "pre-upgrade") {
		t.Errorf("setup Job hook = %q", hook)
	}
}

// Every container gets every variable a production process requires, and runs in prod.
func TestChartSetsEveryProdVariable(t *testing.T) {
	required := prodRequired(t)
	for name, c := range render(t, everythingOn).containers() {
		env := envOf(c)
		if env["TASKLOOM_ENV"].Value != "prod" {
			t.Errorf("%s: TASKLOOM_ENV = %q, want prod", name, env["TASKLOOM_ENV"].Value)
		}
		for _, v := range required {
			e, ok := env[v]
			if !ok {
				t.Errorf("%s: %s is not set", name, v)
				continue
			}
			if ref := e.ValueFrom; ref != nil && ref.SecretKeyRef != nil && ref.SecretKeyRef.Optional != nil && *ref.SecretKeyRef.Optional {
				t.Errorf("%s: %s is required in prod but optional in the Secret", name, v)
			}
		}
	}
}

// Every secret the configuration reads comes from a Secret by reference, none is written in a
// manifest, and the chart makes no Secret of its own.
func TestChartInlinesNoSecret(t *testing.T) {
	for _, values := range []map[string]any{nil, everythingOn} {
		r := render(t, values)
		if r.kinds["Secret"] != 0 {
			t.Error("the chart renders a Secret: secret values would be in values.yaml")
		}
		for name, c := range r.containers() {
			env := envOf(c)
			for _, v := range secretVariables() {
				e, ok := env[v]
				if !ok {
					t.Errorf("%s: secret %s is not wired from the Secret", name, v)
					continue
				}
				if e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
					t.Errorf("%s: %s is not a secretKeyRef", name, v)
				}
			}
		}
	}
	// mTLS: the files come from a Secret volume, the variables only name them.
	for name, c := range render(t, everythingOn).containers() {
		env := envOf(c)
		for _, v := range []string{"TEMPORAL_TLS_CERT", "TEMPORAL_TLS_KEY", "TEMPORAL_TLS_CA"} {
			if !strings.HasPrefix(env[v].Value, "/etc/taskloom/temporal-tls/") {
				t.Errorf("%s: %s = %q, want a file of the mounted Secret", name, v, env[v].Value)
			}
		}
		if !mounts(c, "/etc/taskloom/temporal-tls") {
			t.Errorf("%s does not mount the Temporal TLS Secret", name)
		}
	}
}

func mounts(c corev1.Container, path string) bool {
	for _, m := range c.VolumeMounts {
		if m.MountPath == path && m.ReadOnly {
			return true
		}
	}
	return false
}

// Probes call routes the API router (and the codec server) has, on the port the process listens
// on; the listen ports are the configuration's default ports.
func TestChartProbesAndPorts(t *testing.T) {
	routes, err := routes()
	if err != nil {
		t.Fatalf("build the routers: %v", err)
	}
	defaults := config.Defaults()
	r := render(t, everythingOn)
	for comp, want := range map[string]struct{ addrVar, port string }{
		"api":          {"API_ADDR", defaultPort(t, defaults.API.Addr)},
		"worker":       {"WORKER_METRICS_ADDR", defaultPort(t, defaults.Worker.MetricsAddr)},
		"codec-server": {"CODEC_SERVER_ADDR", defaultPort(t, defaults.CodecServer.Addr)},
	} {
		d := r.deployments[comp]
		if d == nil {
			t.Fatalf("no %s Deployment", comp)
		}
		c := d.Spec.Template.Spec.Containers[0]
		if got := envOf(c)[want.addrVar].Value; got != "0.0.0.0:"+want.port {
			t.Errorf("%s: %s = %q, want 0.0.0.0:%s (the configuration's default port)", comp, want.addrVar, got, want.port)
		}
		if len(c.Ports) != 1 || strconv.Itoa(int(c.Ports[0].ContainerPort)) != want.port {
			t.Errorf("%s: container ports %v, want %s", comp, c.Ports, want.port)
		}
		for kind, p := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
			if p == nil {
				if comp == "worker" && kind == "readiness" {
					continue // a worker serves no traffic to be kept from
				}
				t.Errorf("%s has no %s probe", comp, kind)
				continue
			}
			h := p.HTTPGet
			if h == nil || h.Port != intstr.FromString(c.Ports[0].Name) {
				t.Errorf("%s %s probe does not call the container's port: %+v", comp, kind, p)
				continue
			}
			if comp != "worker" && !routes[comp]["GET "+h.Path] {
				t.Errorf("%s %s probe calls %s, which the %s router does not serve", comp, kind, h.Path, comp)
			}
			if comp == "worker" && h.Path != "/metrics" {
				t.Errorf("worker %s probe calls %s; the worker serves /metrics only", kind, h.Path)
			}
		}
	}
	api := r.deployments["api"].Spec.Template.Spec.Containers[0]
	if api.LivenessProbe.HTTPGet.Path != "/healthz" || api.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("API probes: liveness %s, readiness %s; want /healthz and /readyz", api.LivenessProbe.HTTPGet.Path, api.ReadinessProbe.HTTPGet.Path)
	}
	for _, s := range r.services {
		for _, p := range s.Spec.Ports {
			if p.TargetPort.Type != intstr.String {
				t.Errorf("service %s targets port %s by number; name it so it follows the container", s.Name, p.TargetPort.String())
			}
		}
	}
}

// The worker's grace period outlasts its stop timeout, so in-flight activities can finish.
func TestWorkerGraceOutlastsItsStopTimeout(t *testing.T) {
	d := render(t, nil).deployments["worker"]
	stop, err := time.ParseDuration(envOf(d.Spec.Template.Spec.Containers[0])["WORKER_STOP_TIMEOUT"].Value)
	if err != nil {
		t.Fatalf("WORKER_STOP_TIMEOUT: %v", err)
	}
	grace := d.Spec.Template.Spec.TerminationGracePeriodSeconds
	if grace == nil {
		t.Fatal("the worker has no terminationGracePeriodSeconds")
	}
	if time.Duration(*grace)*time.Second <= stop {
		t.Fatalf("terminationGracePeriodSeconds %d does not exceed WORKER_STOP_TIMEOUT %s", *grace, stop)
	}
}

// Every container runs a command the starter binary has, as non-root.
func TestChartRunsStarterCommands(t *testing.T) {
	for name, c := range render(t, everythingOn).containers() {
		if len(c.Command) != 0 || !isStarterCommand(c.Args) {
			t.Errorf("%s runs %v %v, not a starter command", name, c.Command, c.Args)
		}
	}
	r := render(t, nil)
	for comp, d := range r.deployments {
		sc := d.Spec.Template.Spec.SecurityContext
		if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
			t.Errorf("%s pods may run as root", comp)
		}
	}
}
