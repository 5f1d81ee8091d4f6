// Package cli holds the commands of the starter binary. The production main (./starter) and the
// dev stack (./starter/dev) both build their command tree from Root, so every starter subcommand
// also works in the dev binary.
package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/logging"
	"github.com/taskloom/taskloom/internal/platform"
	"github.com/taskloom/taskloom/internal/schema"
)

// Main runs root until it returns or SIGINT/SIGTERM arrives, prints its error and returns the
// process exit code.
func Main(root *cobra.Command) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, root.Name()+":", err)
		return 1
	}
	return 0
}

// Root is the starter command tree (everything but the dev stack).
func Root() *cobra.Command {
	root := &cobra.Command{
		Use:   "starter",
		Short: "taskloom: durable task systems on Temporal",
		Long: `starter runs and operates taskloom.

Configuration comes from environment variables (see docs/configuration.md, .env.example).`,
		SilenceUsage:      true,
		SilenceErrors:     true,
		PersistentPreRunE: prepare,
	}
	addOutputFlags(root)
	root.AddCommand(
		workerCmd(),
		apiCmd(),
		codecServerCmd(),
		apikeyCmd(),
		schedulesCmd(),
		webhookWorkerCmd(), webhookCreatorCmd(), webhookGroupsCmd(), webhookCmd(),
		crawlCmd(),
		pipelineCmd(),
		applyCmd(), entryCmd(),
		migrateCmd(), taskechoCmd(),
		setupCmd(), seedDemoCmd(),
	)
	return root
}

// prepare runs before every command: it checks -o, reads the dev stack's settings for a
// subcommand (the dev stack itself, the dev binary's root command, chooses its own), and marks
// the command's context verbose with -v or for a server.
func prepare(c *cobra.Command, _ []string) error {
	if err := checkOutput(c); err != nil {
		return err
	}
	v, _ := c.Flags().GetBool(flagVerbose)
	v = v || c.Annotations[alwaysLogs] != ""
	if c != c.Root() {
		file, err := loadDevEnv()
		if err != nil {
			return err
		}
		if file != "" && v {
			fmt.Fprintf(c.ErrOrStderr(), "settings the environment leaves unset come from %s\n", file)
		}
		c.SetContext(withDevEnv(c.Context(), file))
	}
	c.SetContext(withVerbose(c.Context(), v))
	return nil
}

// loadPlatform reads the configuration and connects to every dependency. It logs only when the
// command is verbose (-v, or a server).
func loadPlatform(ctx context.Context) (*platform.Platform, *slog.Logger, error) {
	cfg, err := config.Load()
	if err != nil {
		return nil, nil, err
	}
	log := slog.New(slog.DiscardHandler)
	if verbose(ctx) {
		log = logging.New(cfg.LogLevel)
	}
	p, err := platform.Open(ctx, cfg, log)
	if err != nil {
		return nil, nil, explainDevEnv(ctx, err)
	}
	return p, log, nil
}

// withPlatform runs fn with a connected platform and closes it afterwards; most commands are
// this plus their own work.
func withPlatform(c *cobra.Command, fn func(ctx context.Context, p *platform.Platform) error) error {
	p, _, err := loadPlatform(c.Context())
	if err != nil {
		return err
	}
	defer p.Close()
	return explainDevEnv(c.Context(), fn(c.Context(), p))
}

// withSchema is withPlatform for commands that write: the database's indexes (internal/schema)
// are ensured first, and a failure to do so is the command's error.
func withSchema(c *cobra.Command, fn func(ctx context.Context, p *platform.Platform) error) error {
	return withPlatform(c, func(ctx context.Context, p *platform.Platform) error {
		if err := schema.Ensure(ctx, p.Mongo); err != nil {
			return err
		}
		return fn(ctx, p)
	})
}
