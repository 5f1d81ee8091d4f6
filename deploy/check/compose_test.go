package check

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/searchattr"
)

type composeService struct {
	Image            string
	Build            *struct{ Context, Dockerfile string }
	Command          any
	Environment      map[string]any
	Ports            []string
	StopGracePeriod  string `yaml:"stop_grace_period"`
	DependsOn        any    `yaml:"depends_on"`
	taskloomCommands []string
}

func loadCompose(t *testing.T) map[string]*composeService {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Services map[string]*composeService }
	if err := yaml.Unmarshal(raw, &f); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	return f.Services
}

// args is a service's command as a list (compose accepts a string too).
func (s *composeService) args() []string {
	switch c := s.Command.(type) {
	case string:
		return strings.Fields(c)
	case []any:
		out := make([]string, len(c))
		for i, a := range c {
			out[i] = fmt.Sprint(a)
		}
		return out
	}
	return nil
}

func (s *composeService) env(name string) (string, bool) {
	v, ok := s.Environment[name]
	if !ok || v == nil {
		return "", ok
	}
	return fmt.Sprint(v), true
}

// taskloomServices are the services built from deploy/Dockerfile.
func taskloomServices(t *testing.T, services map[string]*composeService) map[string]*composeService {
	out := map[string]*composeService{}
	for name, s := range services {
		if s.Build != nil && s.Build.Dockerfile == "deploy/Dockerfile" {
			out[name] = s
		}
	}
	for _, want := range []string{"api", "worker", "codec-server"} {
		if out[want] == nil {
			t.Fatalf("compose has no taskloom %s service", want)
		}
	}
	return out
}

// The same shape as the chart: a Temporal server on PostgreSQL, a MongoDB replica set, Redis,
// Kafka in KRaft mode, and taskloom's processes.
func TestComposeHasTheProductionShape(t *testing.T) {
	s := loadCompose(t)
	need := func(name, image string) *composeService {
		if s[name] == nil || !strings.HasPrefix(s[name].Image, image) {
			t.Fatalf("compose service %s: want image %s…, have %+v", name, image, s[name])
		}
		return s[name]
	}
	need("postgresql", "postgres:")
	if db, _ := need("temporal", "temporalio/").env("DB"); !strings.HasPrefix(db, "postgres") {
		t.Errorf("temporal persists to %q, want PostgreSQL", db)
	}
	need("temporal-ui", "temporalio/ui:")
	if !strings.Contains(strings.Join(need("mongo", "mongo:").args(), " "), "--replSet") {
		t.Error("mongo is not started as a replica set")
	}
	need("redis", "redis:")
	if roles, _ := need("kafka", "apache/kafka").env("KAFKA_PROCESS_ROLES"); !strings.Contains(roles, "controller") {
		t.Errorf("kafka is not in KRaft mode (KAFKA_PROCESS_ROLES=%q)", roles)
	}
	// Every search attribute the workflows set is registered.
	reg := strings.Join(need("temporal-search-attributes", "temporalio/admin-tools").args(), " ")
	for _, a := range searchattr.Registered {
		name, typ, _ := strings.Cut(a, "=")
		if !strings.Contains(reg, "--name "+name+" --type "+typ) {
			t.Errorf("search attribute %s (%s) is not registered", name, typ)
		}
	}
	for name, svc := range taskloomServices(t, s) {
		if !isStarterCommand(svc.args()) {
			t.Errorf("%s runs %v, not a starter command", name, svc.args())
		}
	}
}

func TestComposeSetsEveryProdVariableWithoutInliningSecrets(t *testing.T) {
	required := prodRequired(t)
	for name, svc := range taskloomServices(t, loadCompose(t)) {
		if env, _ := svc.env("TASKLOOM_ENV"); env != "prod" {
			t.Errorf("%s: TASKLOOM_ENV = %q", name, env)
		}
		for _, v := range required {
			if val, ok := svc.env(v); !ok || val == "" {
				t.Errorf("%s: %s is not set", name, v)
			}
		}
		for _, v := range secretVariables() {
			val, ok := svc.env(v)
			if ok && !secretFromOutside(val) {
				t.Errorf("%s: %s is written in compose.yaml; read it from deploy/.env (${%s})", name, v, v)
			}
		}
	}
	for name, svc := range loadCompose(t) {
		for k := range svc.Environment {
			if v, _ := svc.env(k); strings.Contains(k, "PASSWORD") || strings.Contains(k, "PWD") {
				if !secretFromOutside(v) {
					t.Errorf("%s: %s is written in compose.yaml", name, k)
				}
			}
		}
	}
}

var interpolation = regexp.MustCompile(`^\$\{[A-Z0-9_]+(:?[-?][^}]*)?\}$`)

// secretFromOutside accepts an interpolated value, or a store URL that carries no password.
func secretFromOutside(v string) bool {
	if interpolation.MatchString(v) {
		return true
	}
	u, err := url.Parse(v)
	if err != nil || u.Host == "" {
		return false
	}
	_, hasPassword := u.User.Password()
	return !hasPassword
}

// Published ports are the configuration's default ports, which the image's listen addresses keep.
func TestComposePortsAgreeWithTheConfiguration(t *testing.T) {
	defaults := config.Defaults()
	s := taskloomServices(t, loadCompose(t))
	for name, port := range map[string]string{
		"api":          defaultPort(t, defaults.API.Addr),
		"worker":       defaultPort(t, defaults.Worker.MetricsAddr),
		"codec-server": defaultPort(t, defaults.CodecServer.Addr),
	} {
		ports := s[name].Ports
		if len(ports) != 1 || !strings.HasSuffix(ports[0], ":"+port) {
			t.Errorf("%s publishes %v, want the container port %s", name, ports, port)
		}
	}
	grace, err := time.ParseDuration(s["worker"].StopGracePeriod)
	if err != nil || grace <= defaults.Worker.StopTimeout {
		t.Errorf("worker stop_grace_period %q does not exceed WORKER_STOP_TIMEOUT %s", s["worker"].StopGracePeriod, defaults.Worker.StopTimeout)
	}
}
