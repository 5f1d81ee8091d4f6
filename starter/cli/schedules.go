package cli

import (
	"context"
	"reflect"
	"runtime"
	"strings"

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
				done, err := ApplySchedules(ctx, p.Temporal, p.Config)
				if err != nil {
					return err
				}
				applied := make([]map[string]string, len(done))
				for i, s := range done {
					applied[i] = map[string]string{"id": s.ID, "state": "applied"}
				}
				return render(c, applied)
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
			all := allSchedules(cfg)
			views := make([]scheduleView, len(all))
			for i, s := range all {
				views[i] = viewOf(s)
			}
			return render(c, views)
		},
	})
	return cmd
}

// scheduleView is one schedule as `schedules list` prints it.
type scheduleView struct {
	ID       string `json:"id"`
	Every    string `json:"every"`
	Workflow string `json:"workflow"`
	Overlap  string `json:"overlap"`
}

func viewOf(s client.ScheduleOptions) scheduleView {
	v := scheduleView{ID: s.ID, Overlap: strings.ToLower(strings.TrimPrefix(s.Overlap.String(), "SCHEDULE_OVERLAP_POLICY_"))}
	every := make([]string, len(s.Spec.Intervals))
	for i, in := range s.Spec.Intervals {
		every[i] = in.Every.String()
		if in.Offset != 0 {
			every[i] += " (offset " + in.Offset.String() + ")"
		}
	}
	v.Every = strings.Join(every, ", ")
	if a, ok := s.Action.(*client.ScheduleWorkflowAction); ok {
		v.Workflow = workflowName(a.Workflow)
	}
	return v
}

// workflowName is the workflow type a schedule action starts: its name, or the function's.
func workflowName(w any) string {
	if name, ok := w.(string); ok {
		return name
	}
	full := runtime.FuncForPC(reflect.ValueOf(w).Pointer()).Name()
	return full[strings.LastIndex(full, ".")+1:]
}

func allSchedules(cfg *config.Config) []client.ScheduleOptions {
	var all []client.ScheduleOptions
	for _, set := range scheduleSets {
		all = append(all, set(cfg)...)
	}
	return all
}

// AppliedSchedule is one schedule ApplySchedules applied: Created, or updated to match the
// configuration when it existed.
type AppliedSchedule struct {
	ID      string
	Created bool
}

// ApplySchedules applies every subsystem's schedules and returns what it did to each.
func ApplySchedules(ctx context.Context, tc client.Client, cfg *config.Config) ([]AppliedSchedule, error) {
	var applied []AppliedSchedule
	for _, s := range allSchedules(cfg) {
		created, err := schedule.Upsert(ctx, tc, s)
		if err != nil {
			return applied, err
		}
		applied = append(applied, AppliedSchedule{ID: s.ID, Created: created})
	}
	return applied, nil
}
