package main

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/taskloom/taskloom/internal/codec"
	"github.com/taskloom/taskloom/internal/config"
)

func testCluster(t *testing.T, o options) *cluster {
	t.Helper()
	dir := t.TempDir()
	secrets, err := loadSecrets(filepath.Join(dir, secretsFile))
	if err != nil {
		t.Fatal(err)
	}
	return &cluster{layout: layout{dir}, repo: "/repo", bin: "/repo/.bin", ports: testPorts(t), secrets: secrets, opts: o}
}

// envOf is a process's environment as a map.
func envOf(p proc) map[string]string {
	m := map[string]string{}
	for _, kv := range p.Env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// TestEveryTaskloomProcessLoadsTheProductionConfig: each api and worker gets a configuration
// that TASKLOOM_ENV=prod accepts, with what a prod worker has no default for (the README
// pipeline's WATERMARK_URL, the callback secret, the crawler command), encryption on, and the
// callback secret the fake SCF signs with.
func TestEveryTaskloomProcessLoadsTheProductionConfig(t *testing.T) {
	c := testCluster(t, options{})
	procs := c.procs()
	i := slices.IndexFunc(procs, func(p proc) bool { return p.Name == "fakes" })
	fakeSecret := envOf(procs[i])["INTERNAL_CALLBACK_SECRET"]
	if fakeSecret == "" {
		t.Fatal("the fakes process has no INTERNAL_CALLBACK_SECRET")
	}
	n := 0
	for _, p := range procs {
		if filepath.Base(p.Argv[0]) != "starter" {
			continue
		}
		n++
		t.Run(p.Name, func(t *testing.T) {
			for k, v := range envOf(p) {
				t.Setenv(k, v)
			}
			cfg, err := config.Load()
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Env != "prod" || cfg.Dev() {
				t.Errorf("TASKLOOM_ENV %q", cfg.Env)
			}
			if cfg.Pipeline.CallbackSecret != fakeSecret {
				t.Error("INTERNAL_CALLBACK_SECRET differs from the fake SCF's")
			}
			if cfg.Pipeline.WatermarkURL == "" || cfg.Crawl.CrawlerCommand == "" || len(cfg.Kafka.Brokers) == 0 {
				t.Errorf("watermark %q, crawler %q, brokers %v", cfg.Pipeline.WatermarkURL, cfg.Crawl.CrawlerCommand, cfg.Kafka.Brokers)
			}
			if cd, err := codec.FromSpec(cfg.Temporal.CodecKeys); err != nil || cd == nil {
				t.Errorf("payload encryption: codec %v, %v", cd, err)
			}
			if !strings.HasPrefix(cfg.Redis.URL, "redis://"+machineRedis) || cfg.Redis.KeyPrefix == "" {
				t.Errorf("redis %q prefix %q", cfg.Redis.URL, cfg.Redis.KeyPrefix)
			}
		})
	}
	if n != 5 {
		t.Errorf("%d starter processes, want 5 (2 api, 2 worker, codec-server)", n)
	}
}

func TestOwnPostgresAndRedisAreProcessesOfTheCluster(t *testing.T) {
	shared := testCluster(t, options{})
	own := testCluster(t, options{OwnPostgres: true, OwnRedis: true})
	names := func(c *cluster) []string {
		var out []string
		for _, p := range c.procs() {
			out = append(out, p.Name)
		}
		return out
	}
	if n := names(shared); slices.Contains(n, "postgres") || slices.Contains(n, "redis") {
		t.Errorf("shared: %v", n)
	}
	got := names(own)
	if got[0] != "postgres" || got[1] != "redis" {
		t.Errorf("own: %v, want postgres and redis first", got)
	}
	for _, n := range got {
		if !slices.Contains(procNames(), n) {
			t.Errorf("process %s is not in procNames (kill/stop/start would refuse it)", n)
		}
	}
	if own.pgAddr() != own.ports.addr("postgres") || !strings.Contains(own.redisURL(), own.ports.addr("redis")) {
		t.Errorf("own: postgres %s, redis %s", own.pgAddr(), own.redisURL())
	}
}

func TestSecretsAreGeneratedOnceAndKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), secretsFile)
	first, err := loadSecrets(path)
	if err != nil {
		t.Fatal(err)
	}
	again, err := loadSecrets(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 4 {
		t.Errorf("secrets %v, want the callback secret, the webhook secret, the codec key and the key prefix", slices.Sorted(maps.Keys(first)))
	}
	for k, v := range first {
		if v == "" || again[k] != v {
			t.Errorf("%s: first %q, then %q", k, v, again[k])
		}
	}
}
