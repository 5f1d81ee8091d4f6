package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/taskloom/taskloom/internal/envfile"
)

// Timeouts of up's waits. The Temporal server takes tens of seconds to join its ring on a
// loaded 2-core machine.
const (
	readyTimeout = 3 * time.Minute
	pollEvery    = 300 * time.Millisecond
)

// up starts every process that is not running, in order, each once the ones it needs answer,
// then prepares the deployment (setup, demo data) and writes the env file.
func (c *cluster) up(ctx context.Context) error {
	if err := c.checkBinaries(); err != nil {
		return err
	}
	procs := map[string]proc{}
	for _, p := range c.procs() {
		procs[p.Name] = p
	}
	if c.opts.OwnPostgres {
		if err := c.initPostgres(ctx); err != nil {
			return err
		}
		if err := c.ensure(ctx, procs["postgres"], c.postgresReady); err != nil {
			return err
		}
	}
	if c.opts.OwnRedis {
		if err := os.MkdirAll(filepath.Join(c.dir, "redis"), 0o755); err != nil {
			return err
		}
		if err := c.ensure(ctx, procs["redis"], tcpReady(c.ports.addr("redis"))); err != nil {
			return err
		}
	}
	if err := c.ensureSchemas(ctx); err != nil {
		return err
	}
	if err := writeTemporalConfigs(c.dir, c.ports, c.pgAddr()); err != nil {
		return err
	}
	if err := writeUIConfig(c.dir, c.ports); err != nil {
		return err
	}
	// The frontend alone first: it creates the cluster metadata on an empty database.
	first := temporalServices[0].Name
	if err := c.ensure(ctx, procs[first], c.frontendReady); err != nil {
		return err
	}
	if err := c.ensureAll(ctx, procs, temporalNames()[1:]); err != nil {
		return err
	}
	if err := c.ensureNamespace(ctx); err != nil {
		return err
	}
	if err := c.ensureAll(ctx, procs, []string{"temporal-ui", "mongo", "kafka", "fakes"}); err != nil {
		return err
	}
	if err := c.setup(ctx); err != nil {
		return err
	}
	if err := c.ensureAll(ctx, procs, []string{"codec-server", "worker-1", "worker-2"}); err != nil {
		return err
	}
	for _, api := range []string{"api-1", "api-2"} {
		if err := c.ensure(ctx, procs[api], httpReady(c.ports.url(api)+"/readyz")); err != nil {
			return err
		}
	}
	if err := c.seed(ctx); err != nil {
		return err
	}
	if err := envfile.Write(filepath.Join(c.dir, envFile), "written by .bin/cluster up: set -a; . "+c.relDir()+"/"+envFile+"; set +a", fileVars(c.envVars())); err != nil {
		return err
	}
	c.banner(os.Stderr)
	return nil
}

func temporalNames() []string {
	var names []string
	for _, s := range temporalServices {
		names = append(names, s.Name)
	}
	return names
}

// checkBinaries fails with the make target to run when a binary the cluster runs is missing.
func (c *cluster) checkBinaries() error {
	for _, b := range []string{"temporal-server", "temporal-sql-tool", "temporal-ui-server", "embedded-mongo", "starter", "cluster"} {
		if !isExecutable(filepath.Join(c.bin, b)) {
			return fmt.Errorf(".bin/%s is missing: run make cluster-tools (the Temporal server, ~5 min once), make tools and make starter", b)
		}
	}
	return nil
}

// ensureAll starts every named process that is not running, then waits for each until its
// readyPort accepts connections.
func (c *cluster) ensureAll(ctx context.Context, procs map[string]proc, names []string) error {
	exits := map[string]<-chan struct{}{}
	for _, n := range names {
		ch, err := c.startIfDown(procs[n])
		if err != nil {
			return err
		}
		exits[n] = ch
	}
	for _, n := range names {
		if err := c.await(ctx, n, exits[n], tcpReady(c.ports.addr(readyPort(n)))); err != nil {
			return err
		}
	}
	return nil
}

// ensure starts p unless it runs and waits until ready answers.
func (c *cluster) ensure(ctx context.Context, p proc, ready func(context.Context) error) error {
	exited, err := c.startIfDown(p)
	if err != nil {
		return err
	}
	return c.await(ctx, p.Name, exited, ready)
}

// startIfDown starts p unless it is running; the channel (nil for a process already running)
// closes when a process started here exits.
func (c *cluster) startIfDown(p proc) (<-chan struct{}, error) {
	if _, ok := c.running(p.Name); ok {
		return nil, nil
	}
	fmt.Fprintf(os.Stderr, "cluster: starting %s\n", p.Name)
	return c.start(p)
}

// await polls ready until it succeeds, the process exits (an error with its log's tail) or
// readyTimeout passes.
func (c *cluster) await(ctx context.Context, name string, exited <-chan struct{}, ready func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	for {
		err := ready(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("%s exited while starting; the end of %s:\n%s", name, c.logFile(name), tail(c.logFile(name), 20))
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %s: %w (log: %s)", name, readyTimeout, err, c.logFile(name))
		case <-time.After(pollEvery):
		}
	}
}

// tail is the last n lines of a file.
func tail(path string, n int) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// readyPort is the port that accepts connections once a process serves: a Temporal service's
// gRPC port, but the worker service's membership port (it serves no gRPC), the fake vendors' port
// for the fakes, a worker's metrics port, else the process's own port.
func readyPort(name string) string {
	switch {
	case name == "temporal-worker":
		return name + ".membership"
	case strings.HasPrefix(name, "temporal-") && name != "temporal-ui":
		return name + ".grpc"
	case name == "fakes":
		return name + ".vendors"
	case strings.HasPrefix(name, "worker-"):
		return name + ".metrics"
	}
	return name
}

func tcpReady(addr string) func(context.Context) error {
	return func(ctx context.Context) error {
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		return conn.Close()
	}
}

func httpReady(url string) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		return nil
	}
}

// run runs a command of the repository's binaries to completion with env and returns its
// standard output; a failure carries its standard error.
func (c *cluster) run(ctx context.Context, env []string, argv ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = env, c.repo
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s: %w\n%s%s", strings.Join(argv[:min(len(argv), 3)], " "), err, out, stderr.String())
	}
	return out, nil
}

// setupAttempts: setup right after the cluster started may meet a history shard still being
// acquired; it is idempotent, so it is simply run again.
const setupAttempts = 5

// setup runs `starter setup` as any deployment does, and keeps the admin key it prints the
// first time in CLUSTER_DIR/admin-key.
func (c *cluster) setup(ctx context.Context) error {
	var out []byte
	var err error
	for i := range setupAttempts {
		if out, err = c.run(ctx, environ(c.taskloomEnv()...), filepath.Join(c.bin, "starter"), "setup", "-o", "json"); err == nil {
			break
		}
		if i < setupAttempts-1 {
			fmt.Fprintf(os.Stderr, "cluster: setup failed, retrying: %v\n", err)
			time.Sleep(5 * time.Second)
		}
	}
	if err != nil {
		return err
	}
	var steps []struct{ Step, State, Detail string }
	if err := json.Unmarshal(out, &steps); err != nil {
		return fmt.Errorf("starter setup -o json: %w: %s", err, out)
	}
	for _, s := range steps {
		if s.Step == "admin key" && s.State == "created" {
			if err := os.WriteFile(filepath.Join(c.dir, adminKeyFile), []byte(s.Detail+"\n"), 0o600); err != nil {
				return err
			}
		}
	}
	if c.adminKey() == "" {
		return fmt.Errorf("setup created no admin key (MongoDB holds one from before) and %s has none: start clean with make cluster-reset", filepath.Join(c.dir, adminKeyFile))
	}
	return nil
}

// relDir is CLUSTER_DIR relative to the repository when inside it, for the banner.
func (c *cluster) relDir() string {
	if r, err := filepath.Rel(c.repo, c.dir); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return c.dir
}

// errUnknown is the error of a command naming a process the cluster does not have.
var errUnknown = errors.New("unknown process")
