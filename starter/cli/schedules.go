package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/platform"
	"github.com/taskloom/taskloom/internal/schedule"
	pipelinewf "github.com/taskloom/taskloom/workflows/pipeline"
	taskechowf "github.com/taskloom/taskloom/workflows/taskecho"
	webhookwf "github.com/taskloom/taskloom/workflows/webhook"
)

// scheduleSet returns one subsystem's schedules; each subsystem adds its function here.
type scheduleSet func(cfg *config.Config) []client.ScheduleOptions

var scheduleSets = []scheduleSet{webhookwf.ScheduleOptions, pipelinewf.ScheduleOptions, taskechowf.ScheduleOptions}

func schedulesCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "schedules", Short: "Manage taskloom's Temporal schedules"}
	cmd.AddCommand(&cobra.Command{
		Use:   "apply",
		Short: "Create every schedule, or update it to the current configuration",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return withPlatform(c, func(ctx context.Context, p *platform.Platform) error {
				ids, err := ApplySchedules(ctx, p.Temporal, p.Config)
				for _, id := range ids {
					fmt.Fprintf(c.OutOrStdout(), "schedule %s applied\n", id)
				}
				return err
			})
		},
	}, &cobra.Command{
		Use:   "list",
		Short: "List the schedules taskloom manages",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			cfg, err := config.Load()
			if err != nil {
				return err
			}
			for _, s := range allSchedules(cfg) {
				fmt.Fprintf(c.OutOrStdout(), "%s\t%v\n", s.ID, s.Spec.Intervals)
			}
			return nil
		},
	})
	return cmd
}

func allSchedules(cfg *config.Config) []client.ScheduleOptions {
	var all []client.ScheduleOptions
	for _, set := range scheduleSets {
		all = append(all, set(cfg)...)
	}
	return all
}

// ApplySchedules applies every subsystem's schedules and returns the IDs applied.
func ApplySchedules(ctx context.Context, tc client.Client, cfg *config.Config) ([]string, error) {
	var ids []string
	for _, s := range allSchedules(cfg) {
		if err := schedule.Apply(ctx, tc, s); err != nil {
			return ids, err
		}
		ids = append(ids, s.ID)
	}
	return ids, nil
}
