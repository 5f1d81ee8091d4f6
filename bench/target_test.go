package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/taskloom/taskloom/internal/envfile"
)

// clusterEnv is a cluster.env as `.bin/cluster up` writes it (values made up).
func clusterEnv(dir string) map[string]string {
	return map[string]string{
		"API": "http://127.0.0.1:41001", "API_2": "http://127.0.0.1:41002", "ADMIN_KEY": "tl_admin_made_up",
		"CLUSTER_DIR": dir, "TASKLOOM_ENV": "prod", "TEMPORAL_ADDRESS": "127.0.0.1:7233",
		"TEMPORAL_NAMESPACE": "default", "MONGO_URI": "mongodb://127.0.0.1:27017/", "MONGO_DATABASE": "taskloom",
		"REDIS_URL": "redis://127.0.0.1:6379/0", "REDIS_KEY_PREFIX": "taskloom-cluster-ab12:",
		"TEMPORAL_METRICS_URLS": "http://127.0.0.1:9001/metrics,http://127.0.0.1:9002/metrics",
		"FAKES_URL":             "http://127.0.0.1:42001", "TELEGRAM_FAKE_URL": "http://127.0.0.1:42002",
		"INTERNAL_CALLBACK_SECRET": "made-up-callback-secret-of-enough-length",
		"CRAWL_CRAWLER_COMMAND":    "/x/cluster fake-crawler --original-task-id {id} --brokers {brokers}",
	}
}

func TestClusterTargetFromEnvFile(t *testing.T) {
	dir := t.TempDir()
	var vars []envfile.Var
	for k, v := range clusterEnv(dir) {
		vars = append(vars, envfile.Var{Key: k, Value: v})
	}
	// The crawler command is written quoted: the target must read it unquoted.
	if err := envfile.Write(filepath.Join(dir, "cluster.env"), "test", vars); err != nil {
		t.Fatal(err)
	}
	tg, err := loadCluster("/unused", dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"http://127.0.0.1:41001", "http://127.0.0.1:41002"}; !slices.Equal(tg.apis, want) {
		t.Errorf("apis = %v, want %v", tg.apis, want)
	}
	if want := []string{"http://127.0.0.1:9001/metrics", "http://127.0.0.1:9002/metrics"}; !slices.Equal(tg.temporalMetrics, want) {
		t.Errorf("temporal metrics = %v, want %v", tg.temporalMetrics, want)
	}
	c := tg.cfg
	got := []string{tg.adminKey, c.Temporal.Address, c.Temporal.Namespace, c.Mongo.URI, c.Mongo.Database, c.Redis.URL, c.Redis.KeyPrefix,
		tg.vendorsURL, tg.assistantURL, c.Crawl.CrawlerCommand}
	want := []string{"tl_admin_made_up", "127.0.0.1:7233", "default", "mongodb://127.0.0.1:27017/", "taskloom", "redis://127.0.0.1:6379/0",
		"taskloom-cluster-ab12:", "http://127.0.0.1:42001", "http://127.0.0.1:42002", "/x/cluster fake-crawler --original-task-id {id} --brokers {brokers}"}
	if !slices.Equal(got, want) {
		t.Errorf("target =\n%q, want\n%q", got, want)
	}
}

func TestClusterTargetNamesWhatIsMissing(t *testing.T) {
	vars := clusterEnv(t.TempDir())
	delete(vars, "ADMIN_KEY")
	delete(vars, "TEMPORAL_ADDRESS")
	_, err := clusterFromEnv(vars)
	if err == nil || !strings.Contains(err.Error(), "ADMIN_KEY, TEMPORAL_ADDRESS") {
		t.Fatalf("err = %v, want one naming ADMIN_KEY, TEMPORAL_ADDRESS", err)
	}
}

func TestClusterProcessesByRole(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"temporal-frontend.pid": "11\n", "temporal-history-1.pid": "12", "temporal-ui.pid": "13",
		"mongo.pid": "14", "worker-1.pid": "15", "worker-2.pid": "16", "api-1.pid": "17", "kafka.pid": "18",
		"worker-1.json": `{"ports":{"worker-1.metrics":9101}}`, "worker-2.json": `{"ports":{"worker-2.metrics":9102}}`}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(run, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tg := &clusterTarget{dir: dir}
	procs, err := tg.procs()
	if err != nil {
		t.Fatal(err)
	}
	for _, pids := range procs {
		slices.Sort(pids)
	}
	want := map[string][]int{"temporal server": {11, 12}, "ferretdb": {14}, "worker": {15, 16}, "api": {17}}
	if len(procs) != len(want) {
		t.Errorf("roles = %v, want %v", procs, want)
	}
	for role, pids := range want {
		if !slices.Equal(procs[role], pids) {
			t.Errorf("%s = %v, want %v", role, procs[role], pids)
		}
	}
	urls, err := tg.workerMetrics()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"http://127.0.0.1:9101/metrics", "http://127.0.0.1:9102/metrics"}; !slices.Equal(urls, want) {
		t.Errorf("worker metrics = %v, want %v", urls, want)
	}
}
