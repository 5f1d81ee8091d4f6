// Command cluster runs taskloom in its production shape on one machine — `make cluster`: a
// Temporal cluster built from go.temporal.io/server (frontend, two history, matching and worker
// processes on PostgreSQL persistence and visibility) with its Web UI, two `starter api` and two
// `starter worker` with TASKLOOM_ENV=prod, the codec server, Redis, and stand-ins where this
// machine has no server: embedded FerretDB for MongoDB, kfake for Kafka, the dev fakes for
// Feishu, Telegram, the vendors and SCF. Every process runs detached, in its own session, so
// the cluster outlives this command; its state is in CLUSTER_DIR (default .data/cluster).
// It links the dev stack's stand-ins (internal/devstack); the production starter does not.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"

	"github.com/spf13/cobra"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := root().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}

// clusterDir is CLUSTER_DIR, default .data/cluster.
func clusterDir() string {
	if d := os.Getenv("CLUSTER_DIR"); d != "" {
		return d
	}
	return ".data/cluster"
}

func root() *cobra.Command {
	r := &cobra.Command{
		Use:           "cluster",
		Short:         "Run taskloom's production shape on one machine (make cluster)",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	r.AddCommand(upCmd(), downCmd(), statusCmd(), fakesCmd(), kafkaCmd(), fakeCrawlerCmd())
	for _, a := range []struct {
		use, short string
		fn         func(context.Context, *cluster, string) error
	}{
		{"kill", "SIGKILL one process (its whole process group), without restarting it", func(_ context.Context, c *cluster, n string) error { return c.kill(n) }},
		{"stop", "stop one process: SIGTERM, SIGKILL after 10 s", func(_ context.Context, c *cluster, n string) error { return c.stop(n) }},
		{"start", "start one process again with the argv, environment and ports it was started with", startOne},
		{"restart", "stop, then start one process", func(ctx context.Context, c *cluster, n string) error {
			if err := c.stop(n); err != nil {
				return err
			}
			return startOne(ctx, c, n)
		}},
	} {
		r.AddCommand(procCmd(a.use, a.short, a.fn))
	}
	return r
}

func upCmd() *cobra.Command {
	var reset bool
	var flags options
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start every process that is not running, run setup and seed-demo, write the env file, print the banner",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if reset {
				if err := resetDir(cmd.Context()); err != nil {
					return err
				}
			}
			c, err := openCluster(clusterDir(), flags)
			if err != nil {
				return err
			}
			return c.up(cmd.Context())
		},
	}
	cmd.Flags().BoolVar(&reset, "reset", false, "stop everything and delete CLUSTER_DIR (and the cluster's databases) first")
	cmd.Flags().BoolVar(&flags.OwnPostgres, "own-postgres", false, "run a private PostgreSQL under CLUSTER_DIR/pg instead of the machine's 127.0.0.1:5432")
	cmd.Flags().BoolVar(&flags.OwnRedis, "own-redis", false, "run a private redis-server instead of the machine's 127.0.0.1:6379")
	return cmd
}

// resetDir stops the cluster, drops its databases on the machine's PostgreSQL and deletes
// CLUSTER_DIR.
func resetDir(ctx context.Context) error {
	dir := clusterDir()
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	c, err := openCluster(dir, options{})
	if err != nil {
		return err
	}
	if err := c.down(); err != nil {
		return err
	}
	if !c.opts.OwnPostgres {
		if err := c.dropDatabases(ctx); err != nil {
			return err
		}
	}
	return os.RemoveAll(c.dir)
}

func downCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "down",
		Short: "Stop every process the cluster started (SIGTERM, SIGKILL after 10 s); state stays in CLUSTER_DIR",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if _, err := os.Stat(clusterDir()); errors.Is(err, os.ErrNotExist) {
				return nil
			}
			c, err := openCluster(clusterDir(), options{})
			if err != nil {
				return err
			}
			return c.down()
		},
	}
}

// downStages are the processes in the order they stop: what uses a server before the server.
var downStages = [][]string{
	{"api-1", "api-2", "worker-1", "worker-2", "codec-server"},
	{"fakes", "kafka", "mongo", "temporal-ui"},
	{"temporal-worker", "temporal-matching", "temporal-history-1", "temporal-history-2", "temporal-frontend"},
	{"redis", "postgres"},
}

// down stops every process, a stage at a time, the processes of a stage together, and checks
// that none is left.
func (c *cluster) down() error {
	var errs []error
	for _, stage := range downStages {
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, n := range stage {
			wg.Go(func() {
				if err := c.stop(n); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
	}
	for _, n := range procNames() {
		if pid := c.pid(n); pid > 0 && groupHasLive(pid) {
			errs = append(errs, fmt.Errorf("%s (pid %d) is still running", n, pid))
		}
	}
	if len(errs) == 0 {
		fmt.Fprintln(os.Stderr, "cluster: every process stopped")
	}
	return errors.Join(errs...)
}

func statusCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "One line per process: name, pid, alive or dead, ports",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := openCluster(clusterDir(), options{})
			if err != nil {
				return err
			}
			for _, n := range procNames() {
				p, err := c.recorded(n)
				if err != nil {
					continue // never started (a private PostgreSQL or Redis not asked for)
				}
				pid, up := c.running(n)
				fmt.Fprintln(cmd.OutOrStdout(), describe(p, pid, up))
			}
			return nil
		},
	}
}

// procCmd is a command acting on one named process.
func procCmd(use, short string, fn func(context.Context, *cluster, string) error) *cobra.Command {
	return &cobra.Command{
		Use:   use + " NAME",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(procNames(), args[0]) {
				return fmt.Errorf("%w %q; the processes are: %v", errUnknown, args[0], procNames())
			}
			c, err := openCluster(clusterDir(), options{})
			if err != nil {
				return err
			}
			return fn(cmd.Context(), c, args[0])
		},
	}
}

// startOne starts a recorded process again and waits until its readyPort accepts connections.
func startOne(ctx context.Context, c *cluster, name string) error {
	p, err := c.recorded(name)
	if err != nil {
		return err
	}
	exited, err := c.startIfDown(p)
	if err != nil {
		return err
	}
	return c.await(ctx, name, exited, tcpReady(c.ports.addr(readyPort(name))))
}
