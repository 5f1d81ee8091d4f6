// Package config loads taskloom's configuration from environment variables into one typed
// struct and validates it, so a wrong value fails at start with the variable's name.
package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"reflect"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/caarlos0/env/v11"
)

// Config is the whole configuration. Subsystem sections live in their own files.
type Config struct {
	// `dev` lets the dev stack embed unset dependencies; `prod` requires `MONGO_URI` and `REDIS_URL`.
	Env string `env:"TASKLOOM_ENV" envDefault:"dev" readby:"api,worker,cli"`
	// `debug`, `info`, `warn` or `error` (JSON logs on stderr).
	LogLevel string `env:"LOG_LEVEL" envDefault:"info" readby:"api,worker,cli"`

	// The section tags title docs/configuration.md's tables; readby names the processes that read
	// a section's variables (a field's own readby overrides it).
	Temporal    Temporal    `section:"General" readby:"api,worker,cli"`
	Mongo       Mongo       `section:"General" readby:"api,worker,cli"`
	Redis       Redis       `section:"General" readby:"api,worker"`
	Kafka       Kafka       `section:"General" readby:"api,worker"`
	API         API         `section:"General" readby:"api"`
	Worker      Worker      `section:"General" readby:"worker"`
	CodecServer CodecServer `section:"Codec server" readby:"codec-server"`

	Pipeline Pipeline `section:"Pipelines" readby:"api,worker"`
	Entry    Entry    `section:"Entry" readby:"api,worker"`
	Echo     Echo     `section:"Echo / TaskEcho" readby:"api,worker"`
	Webhook  Webhook  `section:"Webhook result table" readby:"api,worker,cli"`
	Crawl    Crawl    `section:"Crawl progress" readby:"api,worker,cli"`

	DevStack DevStack `section:"Dev stack" readby:"dev"`
}

// Temporal says where the Temporal frontend is and how to reach it.
type Temporal struct {
	// Temporal frontend; when unset, `make dev` starts the dev server.
	Address string `env:"TEMPORAL_ADDRESS" envDefault:"127.0.0.1:7233"`
	// Temporal namespace.
	Namespace string `env:"TEMPORAL_NAMESPACE" envDefault:"default"`
	// Task queue of every taskloom workflow.
	TaskQueue string `env:"TEMPORAL_TASK_QUEUE" envDefault:"taskloom"`
	// Temporal Web UI the operations console (`/ui/console`) links executions to.
	UIURL string `env:"TEMPORAL_UI_URL" envDefault:"http://localhost:8233" readby:"api"`
	// mTLS client certificate file for a self-hosted cluster (with `TEMPORAL_TLS_KEY`).
	TLSCertFile string `env:"TEMPORAL_TLS_CERT"`
	// mTLS client key file for a self-hosted cluster (with `TEMPORAL_TLS_CERT`).
	TLSKeyFile string `env:"TEMPORAL_TLS_KEY"`
	// CA certificate file that verifies a self-hosted cluster's server certificate (mTLS).
	TLSCAFile string `env:"TEMPORAL_TLS_CA"`
	// API key for Temporal Cloud (turns TLS on).
	APIKey string `env:"TEMPORAL_API_KEY"`
	// Run the worker as a Worker Deployment Version (`TEMPORAL_DEPLOYMENT_NAME`, build id): Pinned
	// workflows then finish on the build they started on, and a new build takes new work once it is
	// made current (`temporal worker deployment set-current-version`). `make dev` turns it on.
	WorkerVersioning bool `env:"TEMPORAL_WORKER_VERSIONING" envDefault:"false" readby:"worker"`
	// Worker Deployment name under Worker Versioning.
	DeploymentName string `env:"TEMPORAL_DEPLOYMENT_NAME" envDefault:"taskloom" readby:"worker"`
	// Build id under Worker Versioning. Default: the binary's module version, else its VCS revision
	// (`-dirty` when built from a modified tree), else `dev`.
	BuildIDOverride string `env:"TEMPORAL_BUILD_ID" readby:"worker"`
	// Payload encryption for every client and worker: AES-256-GCM keys written `id:base64key,…`
	// (32-byte keys); the first encrypts, all decrypt, so a new key goes first and an old one stays
	// until no history needs it. Empty: payloads are stored in plain text.
	CodecKeys string `env:"TEMPORAL_CODEC_KEYS"`
}

// BuildID is the worker's build id under Worker Versioning: TEMPORAL_BUILD_ID, else the binary's
// version (its module version, else its VCS revision, "-dirty" when built from a modified tree),
// else "dev".
func (t Temporal) BuildID() string {
	if t.BuildIDOverride != "" {
		return t.BuildIDOverride
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision":
			rev = s.Value
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = "-dirty"
		}
	}
	if rev == "" {
		return "dev"
	}
	return rev + dirty
}

// Mongo is the document store (MongoDB ≥ 6 in production, FerretDB in dev).
type Mongo struct {
	// MongoDB ≥ 6 URI, e.g. `mongodb://db:27017/?replicaSet=rs0`. Default: embedded FerretDB in dev.
	URI string `env:"MONGO_URI" prod:"required"`
	// Database name.
	Database string `env:"MONGO_DATABASE" envDefault:"taskloom"`
}

// Redis holds counters, rate limits and progress hashes.
type Redis struct {
	// Redis URL, e.g. `redis://host:6379/0`. Default: embedded miniredis in dev.
	URL string `env:"REDIS_URL" prod:"required"`
	// Prefix of every key taskloom writes (share a Redis between deployments).
	KeyPrefix string `env:"REDIS_KEY_PREFIX"`
}

// Kafka is the crawl subsystem's broker.
type Kafka struct {
	// Comma-separated `host:port` list. Unset outside dev, the worker skips the crawl consumers
	// (with a warning) and crawl tasks get no data. Default: embedded kfake in dev.
	Brokers []string `env:"KAFKA_BROKERS" envSeparator:","`
}

// API is the HTTP server.
type API struct {
	// HTTP listen address.
	Addr string `env:"API_ADDR" envDefault:"127.0.0.1:8080"`
	// The API's URL as others reach it (callback URLs); default `http://API_ADDR`.
	PublicURL string `env:"API_PUBLIC_URL" readby:"api,worker"`
	// Largest request body (413 beyond).
	BodyLimit string `env:"API_BODY_LIMIT" envDefault:"2M"`
	// Drain time on SIGTERM.
	ShutdownTimeout time.Duration `env:"API_SHUTDOWN_TIMEOUT" envDefault:"8s"`
	// In dev, ensured as an admin key (otherwise one is generated once and kept in `.data/admin-key`).
	// Outside dev `starter setup` ensures it as an admin key without printing it; unset, setup creates
	// the first admin key and prints it once. `starter seed-demo` calls the API with it. Default:
	// generated.
	AdminKey string `env:"TASKLOOM_ADMIN_KEY" readby:"dev,cli"`
	// How long an API process trusts an API key it verified without reading MongoDB again; a key
	// revoked or changed through another API replica stops working there within this time (at once on
	// the replica that changed it); `0` reads MongoDB on every request.
	KeyCacheTTL time.Duration `env:"API_KEY_CACHE_TTL" envDefault:"10s"`
	// Longest time to read one request, headers and body, so a client that trickles its bytes
	// cannot hold a connection.
	ReadTimeout time.Duration `env:"API_READ_TIMEOUT" envDefault:"30s" readby:"api"`
	// Longest time from the end of a request's headers to the end of its answer; must exceed
	// `ENTRY_WAIT_TIMEOUT_MAX`, the longest wait a handler makes.
	WriteTimeout time.Duration `env:"API_WRITE_TIMEOUT" envDefault:"150s" readby:"api"`
	// How long a kept-alive connection that sends nothing stays open.
	IdleTimeout time.Duration `env:"API_IDLE_TIMEOUT" envDefault:"120s" readby:"api"`
	// Comma-separated peers (IPs or CIDRs) whose `X-Forwarded-For` names the client, e.g. your load
	// balancer. The sign-in throttle counts per client address, and a header any client can set would
	// give every attempt a fresh one. Empty: the client is the connection's peer.
	TrustedProxies []string `env:"TRUSTED_PROXIES" envSeparator:"," readby:"api"`
}

// TrustedProxyNets is TrustedProxies parsed; a lone address is a one-address network.
func (a API) TrustedProxyNets() ([]*net.IPNet, error) {
	nets := make([]*net.IPNet, 0, len(a.TrustedProxies))
	for _, v := range a.TrustedProxies {
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		if !strings.Contains(v, "/") {
			ip := net.ParseIP(v)
			if ip == nil {
				return nil, fmt.Errorf("%q is not an IP address or CIDR", v)
			}
			bits := 8 * net.IPv6len
			if ip4 := ip.To4(); ip4 != nil {
				ip, bits = ip4, 8*net.IPv4len
			}
			nets = append(nets, &net.IPNet{IP: ip, Mask: net.CIDRMask(bits, bits)})
			continue
		}
		_, n, err := net.ParseCIDR(v)
		if err != nil {
			return nil, fmt.Errorf("%q is not an IP address or CIDR", v)
		}
		nets = append(nets, n)
	}
	return nets, nil
}

// Worker is the Temporal worker process.
type Worker struct {
	// Worker's Prometheus endpoint (`/metrics`); empty turns it off.
	MetricsAddr string `env:"WORKER_METRICS_ADDR" envDefault:"127.0.0.1:9464"`
	// How often each worker's reconciler makes the records of executions ended from outside
	// (terminate, timeout, cancel) say `terminated` (docs/operations.md "Runbook"). `0` turns it off;
	// the API still fixes each task it reads.
	ReconcileInterval time.Duration `env:"RECONCILE_INTERVAL" envDefault:"1m"`
	// How far back (by `CloseTime`) each reconciler pass looks; at least `RECONCILE_INTERVAL`. A pass
	// missed while no worker ran is caught up within it.
	ReconcileLookback time.Duration `env:"RECONCILE_LOOKBACK" envDefault:"1h"`
	// Workflow tasks one worker runs at once (2–10000); a backlog beyond it waits on the task queue,
	// where it is dispatched fairly across users (docs/pipelines.md "Fair under load").
	MaxConcurrentWorkflowTasks int `env:"WORKER_MAX_CONCURRENT_WORKFLOW_TASKS" envDefault:"8"`
	// Activities one worker runs at once (1–10000); same reason.
	MaxConcurrentActivities int `env:"WORKER_MAX_CONCURRENT_ACTIVITIES" envDefault:"128"`
	// How long a stopping worker lets in-flight activities finish before they are cancelled (and
	// retried elsewhere); an orchestrator's grace period must exceed it.
	StopTimeout time.Duration `env:"WORKER_STOP_TIMEOUT" envDefault:"10s"`
}

// Load reads the environment and validates the result.
func Load() (*Config, error) {
	var c Config
	if err := env.Parse(&c); err != nil {
		return nil, fmt.Errorf("config: %w", firstEnvError(err))
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// Dev reports whether the embedded dev stack may stand in for unset dependencies.
func (c *Config) Dev() bool { return c.Env == "dev" }

// Validate checks every value whose form the code relies on.
func (c *Config) Validate() error {
	var errs []error
	check := func(name string, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	check("TASKLOOM_ENV", oneOf(c.Env, "dev", "prod"))
	check("LOG_LEVEL", oneOf(c.LogLevel, "debug", "info", "warn", "error"))
	check("API_ADDR", hostPort(c.API.Addr))
	if c.Worker.MetricsAddr != "" { // empty turns the endpoint off
		check("WORKER_METRICS_ADDR", hostPort(c.Worker.MetricsAddr))
	}
	check("TEMPORAL_ADDRESS", hostPort(c.Temporal.Address))
	if c.Temporal.WorkerVersioning && c.Temporal.DeploymentName == "" {
		check("TEMPORAL_DEPLOYMENT_NAME", errors.New("must be set when TEMPORAL_WORKER_VERSIONING is true"))
	}
	if err := c.Temporal.validateCodecKeys(); err != nil {
		errs = append(errs, err)
	}
	check("WORKER_MAX_CONCURRENT_WORKFLOW_TASKS", between(c.Worker.MaxConcurrentWorkflowTasks, 2, 10_000))
	check("WORKER_MAX_CONCURRENT_ACTIVITIES", between(c.Worker.MaxConcurrentActivities, 1, 10_000))
	check("API_BODY_LIMIT", byteSize(c.API.BodyLimit))
	check("API_READ_TIMEOUT", positiveDuration(c.API.ReadTimeout))
	check("API_IDLE_TIMEOUT", positiveDuration(c.API.IdleTimeout))
	if c.API.WriteTimeout <= c.Entry.WaitTimeoutMax {
		check("API_WRITE_TIMEOUT", fmt.Errorf("%s must exceed ENTRY_WAIT_TIMEOUT_MAX (%s), the longest a request may wait", c.API.WriteTimeout, c.Entry.WaitTimeoutMax))
	}
	_, err := c.API.TrustedProxyNets()
	check("TRUSTED_PROXIES", err)
	if c.Mongo.URI != "" {
		check("MONGO_URI", urlScheme(c.Mongo.URI, "mongodb", "mongodb+srv"))
	}
	if c.Redis.URL != "" {
		check("REDIS_URL", urlScheme(c.Redis.URL, "redis", "rediss"))
	}
	for _, b := range c.Kafka.Brokers {
		check("KAFKA_BROKERS", hostPort(b))
	}
	if !c.Dev() {
		for name, v := range map[string]string{"MONGO_URI": c.Mongo.URI, "REDIS_URL": c.Redis.URL} {
			if v == "" {
				check(name, errors.New("required when TASKLOOM_ENV=prod"))
			}
		}
	}
	if c.Worker.StopTimeout < 0 {
		check("WORKER_STOP_TIMEOUT", errors.New("must not be negative"))
	}
	if c.Worker.ReconcileInterval < 0 {
		check("RECONCILE_INTERVAL", errors.New("must not be negative (0 turns the reconciler off)"))
	}
	if c.Worker.ReconcileLookback < c.Worker.ReconcileInterval {
		check("RECONCILE_LOOKBACK", errors.New("must be at least RECONCILE_INTERVAL"))
	}
	for _, s := range c.sections() {
		if err := s.validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("config: %w", errors.Join(errs...))
	}
	return nil
}

// section is a subsystem's config part; each validates its own variables.
type section interface{ validate() error }

func (c *Config) sections() []section {
	return []section{&c.Pipeline, &c.Entry, &c.Echo, &c.Webhook, &c.Crawl, &c.DevStack, &c.CodecServer}
}

func oneOf(v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return fmt.Errorf("%q is not one of %s", v, strings.Join(allowed, "|"))
}

func between(v, lo, hi int) error {
	if v < lo || v > hi {
		return fmt.Errorf("%d must be between %d and %d", v, lo, hi)
	}
	return nil
}

func hostPort(v string) error {
	_, port, err := net.SplitHostPort(v)
	if err != nil {
		return fmt.Errorf("%q is not host:port", v)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("%q has no valid port (want host:0-65535)", v)
	}
	return nil
}

func urlScheme(v string, schemes ...string) error {
	u, err := url.Parse(v)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%q is not a URL like %s://host:port", v, schemes[0])
	}
	if oneOf(u.Scheme, schemes...) != nil {
		return fmt.Errorf("%q: scheme must be %s", v, strings.Join(schemes, " or "))
	}
	return nil
}

// HTTPURL checks an optional http(s) URL variable; subsystem sections use it.
func HTTPURL(name, v string) error {
	if v == "" {
		return nil
	}
	if err := urlScheme(v, "http", "https"); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

func positiveDuration(d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("%s must be positive", d)
	}
	return nil
}

func byteSize(v string) error {
	s := strings.TrimRight(strings.ToUpper(v), "KMGB")
	if n, err := strconv.Atoi(s); err != nil || n <= 0 {
		return fmt.Errorf("%q is not a size like 512K or 2M", v)
	}
	return nil
}

// firstEnvError unwraps caarlos0/env's aggregate and rewrites a parse error, which names only
// the Go field, so that it names the environment variable that holds the bad value.
func firstEnvError(err error) error {
	var agg env.AggregateError
	if errors.As(err, &agg) && len(agg.Errors) > 0 {
		err = agg.Errors[0]
	}
	var pe env.ParseError
	if errors.As(err, &pe) {
		for _, name := range envNames(reflect.TypeOf(Config{}), pe.Name) {
			if v, ok := os.LookupEnv(name); ok {
				return fmt.Errorf("%s: %q is not a valid %s: %w", name, v, pe.Type, pe.Err)
			}
		}
	}
	return err
}

// envNames lists the env tags of every field called field, at any depth of t.
func envNames(t reflect.Type, field string) []string {
	var names []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Type.Kind() == reflect.Struct && f.Tag.Get("env") == "" {
			names = append(names, envNames(f.Type, field)...)
			continue
		}
		if f.Name == field {
			names = append(names, strings.SplitN(f.Tag.Get("env"), ",", 2)[0])
		}
	}
	return names
}

// Defaults returns the configuration with every default applied and nothing read from the
// environment; tests start from it.
func Defaults() *Config {
	var c Config
	if err := env.ParseWithOptions(&c, env.Options{Environment: map[string]string{}}); err != nil {
		panic(fmt.Sprintf("config defaults do not parse: %v", err))
	}
	return &c
}
