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
	"strconv"
	"strings"
	"time"

	"github.com/caarlos0/env/v11"
)

// Config is the whole configuration. Subsystem sections live in their own files.
type Config struct {
	Env      string `env:"TASKLOOM_ENV" envDefault:"dev"`
	LogLevel string `env:"LOG_LEVEL" envDefault:"info"`

	Temporal Temporal
	Mongo    Mongo
	Redis    Redis
	Kafka    Kafka
	API      API
	Worker   Worker
	// CodecServer is the remote codec process (`starter codec-server`).
	CodecServer CodecServer

	Pipeline Pipeline
	Entry    Entry
	Echo     Echo
	Webhook  Webhook
	Crawl    Crawl

	DevStack DevStack
}

// Temporal says where the Temporal frontend is and how to reach it.
type Temporal struct {
	Address   string `env:"TEMPORAL_ADDRESS" envDefault:"127.0.0.1:7233"`
	Namespace string `env:"TEMPORAL_NAMESPACE" envDefault:"default"`
	TaskQueue string `env:"TEMPORAL_TASK_QUEUE" envDefault:"taskloom"`
	// UIURL is the Temporal Web UI the operations console links executions to.
	UIURL string `env:"TEMPORAL_UI_URL" envDefault:"http://localhost:8233"`
	// TLS is used when a cert/key pair or an API key is given (Temporal Cloud).
	TLSCertFile string `env:"TEMPORAL_TLS_CERT"`
	TLSKeyFile  string `env:"TEMPORAL_TLS_KEY"`
	TLSCAFile   string `env:"TEMPORAL_TLS_CA"`
	APIKey      string `env:"TEMPORAL_API_KEY"`
	// CodecKeys turns payload encryption on for every client and worker: AES-256-GCM keys
	// written "id:base64key,…"; the first encrypts, all decrypt (internal/codec).
	CodecKeys string `env:"TEMPORAL_CODEC_KEYS"`
}

// Mongo is the document store (MongoDB ≥ 6 in production, FerretDB in dev).
type Mongo struct {
	URI      string `env:"MONGO_URI"`
	Database string `env:"MONGO_DATABASE" envDefault:"taskloom"`
}

// Redis holds counters, rate limits and progress hashes.
type Redis struct {
	URL string `env:"REDIS_URL"`
	// KeyPrefix namespaces every key taskloom writes, so several deployments (or tests) can
	// share one Redis.
	KeyPrefix string `env:"REDIS_KEY_PREFIX"`
}

// Kafka is the crawl subsystem's broker.
type Kafka struct {
	Brokers []string `env:"KAFKA_BROKERS" envSeparator:","`
}

// API is the HTTP server.
type API struct {
	Addr            string        `env:"API_ADDR" envDefault:"127.0.0.1:8080"`
	PublicURL       string        `env:"API_PUBLIC_URL"`
	BodyLimit       string        `env:"API_BODY_LIMIT" envDefault:"2M"`
	ShutdownTimeout time.Duration `env:"API_SHUTDOWN_TIMEOUT" envDefault:"8s"`
	AdminKey        string        `env:"TASKLOOM_ADMIN_KEY"`
	// KeyCacheTTL is how long an API process trusts an API key it verified before reading it
	// again; a key revoked through another process stops working within it. 0 turns it off.
	KeyCacheTTL time.Duration `env:"API_KEY_CACHE_TTL" envDefault:"10s"`
}

// Worker is the Temporal worker process.
type Worker struct {
	MetricsAddr string `env:"WORKER_METRICS_ADDR" envDefault:"127.0.0.1:9464"`
	// ReconcileInterval is how often the worker's reconciler lists the executions ended from
	// outside (terminated, timed out, canceled) and makes their tasks' records say terminated;
	// ReconcileLookback is how far back each pass looks (CloseTime), so a pass missed while no
	// worker ran is caught up by the next within it. 0 interval turns the reconciler off (the
	// API still reconciles each task it reads).
	ReconcileInterval time.Duration `env:"RECONCILE_INTERVAL" envDefault:"1m"`
	ReconcileLookback time.Duration `env:"RECONCILE_LOOKBACK" envDefault:"1h"`
	// MaxConcurrentWorkflowTasks and MaxConcurrentActivities bound the tasks one worker runs at
	// once. A backlog beyond them waits on the server's task queue, which dispatches it fairly
	// across users (README "Fair under load"); a worker that took every queued task at once
	// would serve them first come, first served, and swamp the database.
	MaxConcurrentWorkflowTasks int `env:"WORKER_MAX_CONCURRENT_WORKFLOW_TASKS" envDefault:"8"`
	MaxConcurrentActivities    int `env:"WORKER_MAX_CONCURRENT_ACTIVITIES" envDefault:"128"`
	// StopTimeout is how long a stopping worker lets in-flight activities finish before they are
	// cancelled (and retried elsewhere); an orchestrator's grace period must exceed it.
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
	if err := c.Temporal.validateCodecKeys(); err != nil {
		errs = append(errs, err)
	}
	check("WORKER_MAX_CONCURRENT_WORKFLOW_TASKS", between(c.Worker.MaxConcurrentWorkflowTasks, 2, 10_000))
	check("WORKER_MAX_CONCURRENT_ACTIVITIES", between(c.Worker.MaxConcurrentActivities, 1, 10_000))
	check("API_BODY_LIMIT", byteSize(c.API.BodyLimit))
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
