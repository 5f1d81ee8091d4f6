package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/taskloom/taskloom/internal/devstack/fakes/telegram"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedemo"
)

// The entry account of the demo (ENTRY_USER_ID / ENTRY_FEATURE_ID, left at their defaults).
const entryAccount = "entry"

// seed loads the demo data through api-1 as a deployment would: `starter seed-demo` (the fake
// vendors' providers, the fake SCF function, the example pipelines, the demo quota), then the
// entry demo over the fake Telegram's assistant, which seed-demo does not know.
func (c *cluster) seed(ctx context.Context) error {
	api, key := c.ports.url("api-1"), c.adminKey()
	if _, err := c.run(ctx, environ(c.taskloomEnv()...), filepath.Join(c.bin, "starter"), "seed-demo",
		"--api-url", api, "--api-key", key, "--vendors-url", c.ports.url("fakes.vendors"), "-o", "json"); err != nil {
		return err
	}
	return c.seedEntry(ctx, api, key)
}

// seedEntry registers the assistant provider, publishes the entry pipeline and grants the entry
// account its quota when it has none.
func (c *cluster) seedEntry(ctx context.Context, api, key string) error {
	provider := map[string]any{"base_url": c.ports.url("fakes.telegram") + telegram.AssistantPath}
	if err := expect(ctx, http.MethodPut, api+"/api/v1/providers/"+pipelinedemo.EntryProvider, key, provider, http.StatusOK); err != nil {
		return err
	}
	// 201 published, 200 the same definition already was, 409 another definition is kept.
	if err := expect(ctx, http.MethodPost, api+"/api/v1/pipelines", key, pipelinedemo.EntryDefinition(),
		http.StatusCreated, http.StatusOK, http.StatusConflict); err != nil {
		return err
	}
	quota := api + "/api/v1/quotas/" + entryAccount + "/" + entryAccount
	if status, _, err := call(ctx, http.MethodGet, quota, key, nil); err != nil || status == http.StatusOK {
		return err
	}
	return expect(ctx, http.MethodPut, quota, key, map[string]any{"remaining": pipelinedemo.EntryQuotaUnits}, http.StatusOK)
}

// expect calls the API and fails unless the answer's status is one of want.
func expect(ctx context.Context, method, url, key string, body any, want ...int) error {
	status, raw, err := call(ctx, method, url, key, body)
	if err != nil {
		return err
	}
	for _, w := range want {
		if status == w {
			return nil
		}
	}
	return fmt.Errorf("%s %s: status %d: %s", method, url, status, raw)
}

// call sends body as JSON with the admin key and returns the status and the answer.
func call(ctx context.Context, method, url, key string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("X-API-Key", key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, url, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, raw, err
}

// envVars is the env file: where everything is, then every variable the API and the workers
// run with, so `./.bin/starter` and README's examples reach this cluster as written.
func (c *cluster) envVars() []kv {
	p := c.ports
	var metrics []string // each Temporal process's Prometheus endpoint (the bench sums them)
	for _, s := range temporalServices {
		metrics = append(metrics, p.url(s.Name+".metrics")+"/metrics")
	}
	vars := []kv{
		{"API", p.url("api-1")}, {"API_2", p.url("api-2")}, {"ADMIN_KEY", c.adminKey()},
		{"TASKLOOM_ADMIN_KEY", c.adminKey()},
		{"CODEC_SERVER_URL", p.url("codec-server")}, {"FAKES_URL", p.url("fakes.vendors")},
		{"FEISHU_EMULATOR_URL", p.url("fakes.feishu")}, {"TELEGRAM_FAKE_URL", p.url("fakes.telegram")},
		{"SUMMARY_RECEIVER_URL", p.url("fakes.receiver")},
		{"POSTGRES_ADDR", c.pgAddr()}, {"CLUSTER_DIR", c.dir},
		{"TEMPORAL_POSTGRES_DATABASES", dbTemporal + "," + dbVisibility},
		{"TEMPORAL_METRICS_URLS", strings.Join(metrics, ",")},
	}
	return append(vars, c.taskloomEnv()...)
}

// banner prints every URL, the admin key and how to use the cluster from another shell.
func (c *cluster) banner(w io.Writer) {
	p := c.ports
	var b bytes.Buffer
	line := func(k, v string) { fmt.Fprintf(&b, "  %-16s %s\n", k, v) }
	fmt.Fprintf(&b, "\n  taskloom cluster is running (make cluster-down stops it; state in %s)\n\n", c.relDir())
	line("API", fmt.Sprintf("%s  and  %s   (2 × starter api; console: %s/ui/console)", p.url("api-1"), p.url("api-2"), p.url("api-1")))
	line("Workers", fmt.Sprintf("2 × starter worker, metrics %s/metrics and %s/metrics", p.url("worker-1.metrics"), p.url("worker-2.metrics")))
	line("Temporal UI", p.url("temporal-ui")+"   (codec endpoint: "+p.url("codec-server")+")")
	line("Temporal gRPC", p.addr("temporal-frontend.grpc")+"  (namespace default; frontend, 2 × history, matching, worker)")
	line("PostgreSQL", c.pgAddr()+"  (persistence "+dbTemporal+", visibility "+dbVisibility+")")
	line("Redis", c.redisURL()+"  (key prefix "+c.secrets["REDIS_KEY_PREFIX"]+")")
	line("MongoDB", "mongodb://"+p.addr("mongo")+"/  (stand-in: embedded FerretDB; no MongoDB server here)")
	line("Kafka", p.addr("kafka")+"  (stand-in: kfake, in memory; no Kafka broker can be installed here)")
	line("Fake vendors", p.url("fakes.vendors")+"  (+ fake SCF, signing with INTERNAL_CALLBACK_SECRET)")
	line("Feishu emulator", p.url("fakes.feishu")+"  (calls: /_emulator/calls)")
	line("Telegram fake", p.url("fakes.telegram")+"/_admin/messages")
	line("Summary webhook", p.url("fakes.receiver")+"/_received")
	line("Codec server", p.url("codec-server")+"  (payloads are encrypted: TEMPORAL_CODEC_KEYS)")
	fmt.Fprintf(&b, "\n  Admin API key    %s\n", c.adminKey())
	fmt.Fprintf(&b, "  Other shells     set -a; . %s/%s; set +a   (then README's examples and ./.bin/starter run against the cluster)\n", c.relDir(), envFile)
	fmt.Fprintf(&b, "  Processes        .bin/cluster status   (logs: %s/logs/)\n", c.relDir())
	fmt.Fprintf(&b, "  Decode payloads  .bin/temporal workflow show -w ID --address %s --codec-endpoint %s --codec-auth \"Bearer $ADMIN_KEY\"\n\n",
		p.addr("temporal-frontend.grpc"), p.url("codec-server"))
	_, _ = w.Write(b.Bytes())
}
