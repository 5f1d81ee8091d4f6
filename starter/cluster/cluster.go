package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/taskloom/taskloom/internal/envfile"
)

// cluster is one CLUSTER_DIR: its ports, secrets and options, and where the binaries are.
type cluster struct {
	layout
	repo, bin string // the repository root (every process's working directory) and its .bin
	ports     Ports
	secrets   map[string]string
	opts      options
	// newState: CLUSTER_DIR held no secrets yet, so databases of its name on the machine's
	// PostgreSQL belong to a cluster whose state (codec key, admin key) is gone.
	newState bool
}

// options are up's flags, kept in CLUSTER_DIR: a later up without them keeps the private
// PostgreSQL or Redis the directory was created with.
type options struct {
	OwnPostgres bool `json:"own_postgres"`
	OwnRedis    bool `json:"own_redis"`
}

// kv is one variable of a process's environment or of the env file, in order.
type kv struct{ Key, Value string }

// fileVars is vars as envfile writes them.
func fileVars(vars []kv) []envfile.Var {
	out := make([]envfile.Var, len(vars))
	for i, v := range vars {
		out[i] = envfile.Var{Key: v.Key, Value: v.Value}
	}
	return out
}

// envFile, in CLUSTER_DIR, holds what a shell, a test or the bench needs to reach the cluster:
// `set -a; . .data/cluster/cluster.env; set +a`.
const envFile = "cluster.env"

const (
	optionsFile  = "options.json"
	secretsFile  = "secrets.env"
	adminKeyFile = "admin-key"
)

// The machine's PostgreSQL and Redis, used unless --own-postgres / --own-redis.
const (
	machinePostgres = "127.0.0.1:5432"
	machineRedis    = "127.0.0.1:6379"
)

// openCluster reads (or creates) CLUSTER_DIR's state; flags adds to the kept options.
func openCluster(dir string, flags options) (*cluster, error) {
	repo, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(repo, "testdata", "pipelines")); err != nil {
		return nil, errors.New("run the cluster from the repository root (it reads testdata/ and .bin/)")
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(repo, dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	c := &cluster{layout: layout{dir}, repo: repo, bin: filepath.Join(repo, ".bin")}
	if err := readJSON(filepath.Join(dir, optionsFile), &c.opts); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	c.opts.OwnPostgres = c.opts.OwnPostgres || flags.OwnPostgres
	c.opts.OwnRedis = c.opts.OwnRedis || flags.OwnRedis
	if err := writeJSON(filepath.Join(dir, optionsFile), c.opts, 0o644); err != nil {
		return nil, err
	}
	if c.ports, err = loadPorts(dir); err != nil {
		return nil, err
	}
	_, err = os.Stat(filepath.Join(dir, secretsFile))
	c.newState = errors.Is(err, os.ErrNotExist)
	if c.secrets, err = loadSecrets(filepath.Join(dir, secretsFile)); err != nil {
		return nil, err
	}
	return c, nil
}

// loadSecrets reads the secrets generated at the first up, generating the missing ones: the
// callback secret the API and the fake SCF share, the codec key, the Telegram webhook secret
// and the Redis key prefix (fresh per CLUSTER_DIR, so a reset cluster finds no old keys in the
// machine's Redis).
func loadSecrets(path string) (map[string]string, error) {
	s, err := envfile.Read(path)
	if errors.Is(err, os.ErrNotExist) {
		s, err = map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	gen := map[string]func() (string, error){
		"INTERNAL_CALLBACK_SECRET": func() (string, error) { return randomHex(32) },
		"TELEGRAM_WEBHOOK_SECRET":  func() (string, error) { return randomHex(16) },
		"TEMPORAL_CODEC_KEYS": func() (string, error) {
			b := make([]byte, 32)
			_, err := rand.Read(b)
			return "k1:" + base64.StdEncoding.EncodeToString(b), err
		},
		"REDIS_KEY_PREFIX": func() (string, error) {
			h, err := randomHex(4)
			return "taskloom-cluster-" + h + ":", err
		},
	}
	changed := false
	for _, k := range []string{"INTERNAL_CALLBACK_SECRET", "TELEGRAM_WEBHOOK_SECRET", "TEMPORAL_CODEC_KEYS", "REDIS_KEY_PREFIX"} {
		if s[k] != "" {
			continue
		}
		if s[k], err = gen[k](); err != nil {
			return nil, err
		}
		changed = true
	}
	if !changed {
		return s, nil
	}
	var vars []kv
	for _, k := range []string{"INTERNAL_CALLBACK_SECRET", "TELEGRAM_WEBHOOK_SECRET", "TEMPORAL_CODEC_KEYS", "REDIS_KEY_PREFIX"} {
		vars = append(vars, kv{k, s[k]})
	}
	return s, envfile.Write(path, "generated once by .bin/cluster up; deleted by --reset", fileVars(vars))
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

func (c *cluster) dbs() databases { return databasesFor(c.dir) }

func (c *cluster) pgAddr() string {
	if c.opts.OwnPostgres {
		return c.ports.addr("postgres")
	}
	return machinePostgres
}

func (c *cluster) redisURL() string {
	if c.opts.OwnRedis {
		return "redis://" + c.ports.addr("redis") + "/0"
	}
	return "redis://" + machineRedis + "/0"
}

func (c *cluster) adminKey() string {
	b, _ := os.ReadFile(filepath.Join(c.dir, adminKeyFile))
	return strings.TrimSpace(string(b))
}

// The demo Feishu tables of testdata/feishu/taskloom_base.json, as make dev uses them.
const (
	demoTaskTable    = "https://dev.feishu.cn/base/bascnTaskloomDemo?table=tblTasks"
	demoWebhookTable = "https://dev.feishu.cn/wiki/wikcnTaskloomDemo?table=tblWebhook"
	demoDramaTable   = "https://dev.feishu.cn/base/bascnTaskloomDemo?table=tblDrama"
	demoCaptureTable = "https://dev.feishu.cn/base/bascnTaskloomDemo?table=tblCapture"
	// entryPipeline is the pipeline Telegram updates start (seeded by seed-demo).
	entryPipeline = "entry_echo"
)

// taskloomEnv is every variable the API, the worker, the codec server and the CLI get: the
// production configuration (TASKLOOM_ENV=prod) pointed at the cluster's servers and fakes.
func (c *cluster) taskloomEnv() []kv {
	p, s := c.ports, c.secrets
	vendors := p.url("fakes.vendors")
	return []kv{
		{"TASKLOOM_ENV", "prod"}, {"LOG_LEVEL", "info"},
		{"TEMPORAL_ADDRESS", p.addr("temporal-frontend.grpc")}, {"TEMPORAL_NAMESPACE", "default"},
		{"TEMPORAL_UI_URL", p.url("temporal-ui")}, {"TEMPORAL_CODEC_KEYS", s["TEMPORAL_CODEC_KEYS"]},
		{"CODEC_SERVER_ADDR", p.addr("codec-server")},
		{"MONGO_URI", "mongodb://" + p.addr("mongo") + "/"}, {"MONGO_DATABASE", "taskloom"},
		{"REDIS_URL", c.redisURL()}, {"REDIS_KEY_PREFIX", s["REDIS_KEY_PREFIX"]},
		{"KAFKA_BROKERS", p.addr("kafka")},
		{"INTERNAL_CALLBACK_SECRET", s["INTERNAL_CALLBACK_SECRET"]},
		// The fake SCF calls back api-1 (there is no load balancer in front of the two APIs).
		{"PIPELINE_BACKEND_URL", p.url("api-1")},
		// The fakes listen on loopback, which the outbound policy refuses in prod.
		{"PIPELINE_ALLOWED_HOSTS", "127.0.0.1"},
		{"PIPELINE_FAKE_VENDORS_URL", vendors}, {"WATERMARK_URL", vendors + "/assets/watermark.png"},
		{"FEISHU_APP_ID", "cli_cluster"}, {"FEISHU_APP_SECRET", "cluster"}, {"FEISHU_BASE_URL", p.url("fakes.feishu")},
		{"TASK_BITABLE_URL", demoTaskTable}, {"WEBHOOK_BITABLE_URL", demoWebhookTable},
		{"DRAMA_BITABLE_URL", demoDramaTable}, {"CAPTURE_BITABLE_URL", demoCaptureTable},
		{"SUMMARY_WEBHOOK_URL", p.url("fakes.receiver") + "/summary"},
		{"TELEGRAM_BOT_TOKEN", fakeBotToken}, {"TELEGRAM_API_BASE_URL", p.url("fakes.telegram")},
		{"TELEGRAM_WEBHOOK_SECRET", s["TELEGRAM_WEBHOOK_SECRET"]}, {"TELEGRAM_WORKFLOW_ID", entryPipeline},
		{"CRAWL_CRAWLER_COMMAND", filepath.Join(c.bin, "cluster") + " fake-crawler --original-task-id {id} --tweets 450 --brokers {brokers}"},
	}
}

// environ is a process environment: PATH and HOME of the launcher's, then vars (a variable of
// the launcher's shell, e.g. a TASKLOOM_ENV=dev, must not leak into the cluster).
func environ(vars ...kv) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for _, v := range vars {
		env = append(env, v.Key+"="+v.Value)
	}
	return env
}

// procs is every process of the cluster, in start order.
func (c *cluster) procs() []proc {
	var out []proc
	add := func(name string, argv []string, extra ...kv) proc {
		p := proc{Name: name, Argv: argv, Dir: c.repo, Ports: c.ports.of(name), Env: environ(extra...)}
		out = append(out, p)
		return p
	}
	if c.opts.OwnPostgres {
		out = append(out, proc{Name: "postgres", Dir: c.dir, Ports: c.ports.of("postgres"), User: "postgres",
			StopSignal: syscall.SIGINT, Env: environ(),
			Argv: []string{pgBinary("postgres"), "-D", c.pgData(), "-p", strconv.Itoa(c.ports["postgres"]),
				"-h", "127.0.0.1", "-k", c.pgSocketDir()}})
	}
	if c.opts.OwnRedis {
		add("redis", []string{"redis-server", "--port", strconv.Itoa(c.ports["redis"]), "--bind", "127.0.0.1",
			"--dir", filepath.Join(c.dir, "redis"), "--appendonly", "yes", "--save", ""})
	}
	for _, s := range temporalServices {
		add(s.Name, []string{filepath.Join(c.bin, "temporal-server"), "--root", c.dir, "--config", temporalConfigDir,
			"--env", s.Name, "--allow-no-auth", "start", "--service", s.Service})
	}
	add("temporal-ui", []string{filepath.Join(c.bin, "temporal-ui-server"), "--root", c.dir, "--config", uiConfigDir,
		"--env", uiEnv, "start"})
	add("mongo", []string{filepath.Join(c.bin, "embedded-mongo"), "--addr", c.ports.addr("mongo"), "--dir", filepath.Join(c.dir, "mongo")})
	add("kafka", []string{filepath.Join(c.bin, "cluster"), "kafka", "--port", strconv.Itoa(c.ports["kafka"])})
	add("fakes", []string{filepath.Join(c.bin, "cluster"), "fakes", "--vendors", c.ports.addr("fakes.vendors"),
		"--feishu", c.ports.addr("fakes.feishu"), "--telegram", c.ports.addr("fakes.telegram"),
		"--receiver", c.ports.addr("fakes.receiver")}, kv{"INTERNAL_CALLBACK_SECRET", c.secrets["INTERNAL_CALLBACK_SECRET"]})
	starter := filepath.Join(c.bin, "starter")
	env := c.taskloomEnv()
	add("codec-server", []string{starter, "codec-server"}, env...)
	for _, n := range []string{"1", "2"} {
		add("api-"+n, []string{starter, "api"}, append(env, kv{"API_ADDR", c.ports.addr("api-" + n)},
			kv{"API_PUBLIC_URL", c.ports.url("api-" + n)})...)
	}
	for _, n := range []string{"1", "2"} {
		add("worker-"+n, []string{starter, "worker"}, append(env, kv{"WORKER_METRICS_ADDR", c.ports.addr("worker-" + n + ".metrics")})...)
	}
	return out
}

// procNames is every process name the launcher knows, own PostgreSQL and Redis included.
func procNames() []string {
	names := []string{"postgres", "redis"}
	for _, s := range temporalServices {
		names = append(names, s.Name)
	}
	return append(names, "temporal-ui", "mongo", "kafka", "fakes", "codec-server", "api-1", "api-2", "worker-1", "worker-2")
}

func (c *cluster) pgData() string      { return filepath.Join(c.dir, "pg", "data") }
func (c *cluster) pgSocketDir() string { return filepath.Join(c.dir, "pg") }

// pgBinary finds a PostgreSQL server program: on PATH, else in /usr/local/bin, where this
// machine has them, else Debian's /usr/lib/postgresql/*/bin.
func pgBinary(name string) string {
	for _, dir := range append(filepath.SplitList(os.Getenv("PATH")), "/usr/local/bin") {
		if p := filepath.Join(dir, name); isExecutable(p) {
			return p
		}
	}
	if m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name); len(m) > 0 {
		return m[len(m)-1]
	}
	return name
}

func isExecutable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// describe is a one-line summary of a process for status.
func describe(p proc, pid int, up bool) string {
	state := "dead"
	if up {
		state = "alive"
	}
	var ports []string
	for _, n := range slices.Sorted(maps.Keys(p.Ports)) {
		ports = append(ports, fmt.Sprintf("%s=%d", n, p.Ports[n]))
	}
	return fmt.Sprintf("%-20s pid %-7d %-5s %s", p.Name, pid, state, strings.Join(ports, " "))
}
