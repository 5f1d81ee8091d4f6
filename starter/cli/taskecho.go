package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/taskloom/taskloom/internal/platform"
	"github.com/taskloom/taskloom/internal/progressline"
	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/demo"
	"github.com/taskloom/taskloom/internal/taskecho/migrate"
	"github.com/taskloom/taskloom/internal/taskecho/taskechowire"
)

// migrateCmd is `starter migrate`: bring TaskEcho (or older taskloom) data to the current echo
// model — source=client and pulled_at=null where missing, embedded queue tasks moved into the
// tasks collection (internal/taskecho/migrate) — after creating every collection's indexes
// (internal/schema). Safe to run any number of times.
func migrateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Create every index and migrate TaskEcho data to the echo model (idempotent)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return withSchema(c, func(ctx context.Context, p *platform.Platform) error {
				line := progressline.New(c.ErrOrStderr(), 0, "migrate phases")
				r, err := migrate.Run(ctx, p.Mongo, func(done, total int) { line.SetTotal(total); line.Set(done) })
				line.Done()
				if err != nil {
					return fmt.Errorf("migrate: %w", err)
				}
				return render(c, r)
			})
		},
	}
}

// taskechoCmd groups the TaskEcho-compatible task server's operations: `starter taskecho seed-demo`
// (`starter echo …` still works).
func taskechoCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "taskecho", Aliases: []string{"echo"}, Short: "TaskEcho-compatible task server operations"}
	cmd.AddCommand(&cobra.Command{
		Use:   "seed-demo",
		Short: "Create the demo project with pullable server tasks (idempotent)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return withEcho(c, func(ctx context.Context, p *platform.Platform, svc *taskecho.Server) error {
				pid, err := demo.Seed(ctx, svc)
				if err != nil {
					return err
				}
				if outputFormat(c) == outputJSON {
					return render(c, map[string]string{"project_id": pid})
				}
				fmt.Fprintf(c.OutOrStdout(), "seeded project %q; pull its tasks (project level, then its queue) with:\n  %s\n", pid,
					strings.Join(demo.PullCurls("http://"+p.Config.API.Addr, "$API_KEY"), "\n  "))
				return nil
			})
		},
	})
	return cmd
}

// withEcho runs fn with the platform, its indexes ensured, and the task server over it.
func withEcho(c *cobra.Command, fn func(ctx context.Context, p *platform.Platform, svc *taskecho.Server) error) error {
	return withSchema(c, overEcho(fn))
}

// overEcho is fn as a withPlatform or withSchema callback: the task server is wired over the
// platform first.
func overEcho(fn func(ctx context.Context, p *platform.Platform, svc *taskecho.Server) error) func(context.Context, *platform.Platform) error {
	return func(ctx context.Context, p *platform.Platform) error {
		svc, err := taskechowire.FromPlatform(p)
		if err != nil {
			return err
		}
		return fn(ctx, p, svc)
	}
}
