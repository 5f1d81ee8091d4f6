package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/caarlos0/env/v11"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/envfile"
)

// BENCH_TARGET=cluster drives the stack `make cluster` started (docs/benchmarks.md "How to run") instead of
// starting one: its env file names the APIs, the admin key, Temporal, MongoDB, Redis and the
// Temporal metrics endpoints; its run/ directory names the processes and the workers' metrics
// ports. The bench starts nothing, stops nothing and leaves the cluster's state as it found it
// (schedules it paused are resumed).
const targetCluster = "cluster"

// clusterSkips are the scenarios that cannot run against a stack the bench did not start, and why.
var clusterSkips = map[string]string{
	"webhook": "reads and resets the call counters of the bench's own in-process Feishu emulator and summary receiver",
}

// clusterTarget is what the bench needs of a running cluster.
type clusterTarget struct {
	dir      string // CLUSTER_DIR
	cfg      *config.Config
	apis     []string // API, then API_2 when the cluster has one
	adminKey string
	// temporalMetrics are the Prometheus endpoints of every Temporal process (TEMPORAL_METRICS_URLS).
	temporalMetrics []string
	vendorsURL      string // the fake vendors (FAKES_URL)
	assistantURL    string // the fake Telegram server, which serves the assistant (TELEGRAM_FAKE_URL)
}

// clusterFromEnv maps the variables of cluster.env to a target. The configuration is read from
// them exactly as the cluster's api and worker read their environment, so the bench's clients
// (baselines, seeding) use the same namespace, task queue, database, key prefix and codec keys.
func clusterFromEnv(vars map[string]string) (*clusterTarget, error) {
	var missing []string
	for _, k := range []string{"CLUSTER_DIR", "API", "ADMIN_KEY", "TEMPORAL_ADDRESS", "MONGO_URI", "REDIS_URL", "FAKES_URL", "TELEGRAM_FAKE_URL"} {
		if vars[k] == "" {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("cluster.env lacks %s", strings.Join(missing, ", "))
	}
	var c config.Config
	if err := env.ParseWithOptions(&c, env.Options{Environment: vars}); err != nil {
		return nil, fmt.Errorf("cluster.env: %w", err)
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("cluster.env: %w", err)
	}
	t := &clusterTarget{dir: vars["CLUSTER_DIR"], cfg: &c, apis: []string{vars["API"]}, adminKey: vars["ADMIN_KEY"],
		temporalMetrics: splitList(vars["TEMPORAL_METRICS_URLS"]), vendorsURL: vars["FAKES_URL"], assistantURL: vars["TELEGRAM_FAKE_URL"]}
	if api2 := vars["API_2"]; api2 != "" {
		t.apis = append(t.apis, api2)
	}
	return t, nil
}

// loadCluster reads dir/cluster.env; dir is CLUSTER_DIR, relative to root when not absolute.
func loadCluster(root, dir string) (*clusterTarget, error) {
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	vars, err := envfile.Read(filepath.Join(dir, "cluster.env"))
	if err != nil {
		return nil, fmt.Errorf("BENCH_TARGET=cluster: %w (run make cluster first)", err)
	}
	return clusterFromEnv(vars)
}

// processRole is the role a cluster process's CPU and memory are reported under ("" = not
// reported: Kafka, the codec server and the Web UI are not on the metered paths).
func processRole(name string) string {
	switch {
	case strings.HasPrefix(name, "temporal-") && name != "temporal-ui":
		return "temporal server"
	case name == "mongo":
		return "ferretdb"
	case strings.HasPrefix(name, "worker-"):
		return "worker"
	case strings.HasPrefix(name, "api-"):
		return "api"
	case name == "fakes":
		return "fakes"
	}
	return ""
}

// procs reads run/NAME.pid of every process, by role.
func (t *clusterTarget) procs() (map[string][]int, error) {
	files, err := filepath.Glob(filepath.Join(t.dir, "run", "*.pid"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no process of the cluster under %s/run: %v", t.dir, err)
	}
	out := map[string][]int{}
	for _, f := range files {
		role := processRole(strings.TrimSuffix(filepath.Base(f), ".pid"))
		if role == "" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out[role] = append(out[role], pid)
	}
	return out, nil
}

// workerMetrics are the workers' /metrics, from the ports run/worker-N.json records.
func (t *clusterTarget) workerMetrics() ([]string, error) {
	files, err := filepath.Glob(filepath.Join(t.dir, "run", "worker-*.json"))
	if err != nil {
		return nil, err
	}
	var urls []string
	for _, f := range files {
		var rec struct {
			Ports map[string]int `json:"ports"`
		}
		if err := readJSON(f, &rec); err != nil {
			return nil, err
		}
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		port, ok := rec.Ports[name+".metrics"]
		if !ok {
			return nil, fmt.Errorf("%s: no %s.metrics port", f, name)
		}
		urls = append(urls, fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	}
	if len(urls) == 0 {
		return nil, errors.New("the cluster has no worker (run/worker-*.json)")
	}
	return urls, nil
}

// splitList splits a comma-separated list, dropping empty items.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// connect is the stack and the app of the cluster, as the scenarios address them. Load goes to
// the first API (API); the figures count both APIs' and both workers' commands and CPU.
func (t *clusterTarget) connect() (*stack, *app, error) {
	procs, err := t.procs()
	if err != nil {
		return nil, nil, err
	}
	procs["load generator"] = []int{os.Getpid()}
	workers, err := t.workerMetrics()
	if err != nil {
		return nil, nil, err
	}
	a := &app{apiURL: t.apis[0], procs: procs, adminKey: t.adminKey}
	for _, api := range t.apis {
		a.metricsURLs = append(a.metricsURLs, api+"/metrics")
	}
	a.metricsURLs = append(a.metricsURLs, workers...)
	for _, pattern := range []string{"worker-*.log", "api-*.log"} {
		logs, _ := filepath.Glob(filepath.Join(t.dir, "logs", pattern))
		a.logPaths = append(a.logPaths, logs...)
	}
	s := &stack{cfg: t.cfg, target: targetCluster, temporalMetrics: t.temporalMetrics, vendorsURL: t.vendorsURL, assistantURL: t.assistantURL}
	return s, a, nil
}
