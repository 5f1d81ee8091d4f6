package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	"github.com/taskloom/taskloom/internal/platform"
	pipelinewf "github.com/taskloom/taskloom/workflows/pipeline"
)

func pipelineCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pipeline",
		Short: "Vendor pipelines: publish schemas, run and inspect tasks",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(pipelinePublishCmd(), pipelineRunCmd(), pipelineShowCmd(), pipelineRedriveCmd())
	return cmd
}

func pipelinePublishCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "publish FILE...",
		Short: "Validate and publish pipeline definitions ({name, version, schema} JSON files)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, files []string) error {
			return withSchema(c, func(ctx context.Context, p *platform.Platform) error {
				store := pipelinedb.New(p.Mongo)
				lk, err := store.Lookup(ctx)
				if err != nil {
					return err
				}
				published := []map[string]string{}
				for _, f := range files {
					raw, err := os.ReadFile(f)
					if err != nil {
						return err
					}
					d, err := pipeline.ParseDefinition(raw)
					if err == nil {
						err = pipeline.ValidateDefinition(d, lk)
					}
					if err != nil {
						return fmt.Errorf("%s: %w", f, err)
					}
					_, created, err := store.PublishSchema(ctx, d)
					if err != nil {
						return fmt.Errorf("%s: %w", f, err)
					}
					state := "published"
					if !created {
						state = "already published"
					}
					published = append(published, map[string]string{"name": d.Name, "version": d.Version, "state": state})
				}
				return render(c, published)
			})
		},
	}
}

func pipelineRunCmd() *cobra.Command {
	var (
		req   pipelinewf.StartRequest
		input string
		key   string
		wait  time.Duration
	)
	cmd := &cobra.Command{
		Use:   "run PIPELINE",
		Short: "Start a pipeline task (consumes one quota unit) and optionally wait for it",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			req.Pipeline = args[0]
			if err := json.Unmarshal([]byte(input), &req.InputData); err != nil {
				if strings.ContainsAny(input, "‘’“”") {
					return errors.New(`--input is not JSON: it holds a typographic quote (‘ ’ “ ”); write straight quotes (")`)
				}
				return fmt.Errorf("--input must be a JSON object: %w", err)
			}
			if key != "" {
				if err := pipeline.CheckIdempotencyKey(key); err != nil {
					return fmt.Errorf("--idempotency-key: %w", err)
				}
				req.TaskID = pipeline.TaskIDForKey(cliKeyScope, key)
			}
			return withSchema(c, func(ctx context.Context, p *platform.Platform) error {
				store := pipelinedb.New(p.Mongo)
				workflows := &pipelinewf.Client{Temporal: p.Temporal, TaskQueue: p.Config.Temporal.TaskQueue}
				task, err := workflows.Start(ctx, req)
				if err != nil {
					return startError(err, req)
				}
				if wait <= 0 {
					// POST /api/v1/pipeline-tasks's answer, plus whether this request created the task
					return render(c, map[string]any{"task_id": task.TaskID, "status": task.Status, "workflow_id": task.WorkflowID,
						"pipeline": task.Pipeline, "version": task.Version, "created": task.Created})
				}
				wctx, cancel := context.WithTimeout(ctx, wait)
				defer cancel()
				_ = watch(wctx, c.ErrOrStderr(), "task "+task.TaskID+" steps", func(ctx context.Context) (int, int, error) {
					return stepsFinished(ctx, store, task.TaskID)
				}, func() error { return workflows.Wait(wctx, task.TaskID) }) // the task's record says how it ended
				return printTask(ctx, c, store, task.TaskID)
			})
		},
	}
	cmd.Flags().StringVar(&req.Version, "version", "", "pipeline version (default: latest)")
	cmd.Flags().StringVar(&req.UserID, "user", "", "user_id whose quota is consumed (required; make dev grants demo-user)")
	cmd.Flags().StringVar(&req.FeatureID, "feature", "", "feature_id of the quota (required; make dev grants demo-feature)")
	_ = cmd.MarkFlagRequired("user")
	_ = cmd.MarkFlagRequired("feature")
	cmd.Flags().StringVar(&input, "input", "{}", "input_data as a JSON object")
	cmd.Flags().StringVar(&key, "idempotency-key", "", "makes the command safe to repeat: the same key and request give the same task")
	cmd.Flags().DurationVar(&wait, "wait", 0, "wait up to this long for the task to finish, then print it")
	return cmd
}

// cliKeyScope scopes the CLI's idempotency keys (the HTTP API scopes them by API key).
const cliKeyScope = "cli"

func pipelineShowCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "show TASK_ID",
		Short: "Print a pipeline task with its steps",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return withPlatform(c, func(ctx context.Context, p *platform.Platform) error {
				return printTask(ctx, c, pipelinedb.New(p.Mongo), args[0])
			})
		},
	}
}

// stepsFinished counts a pipeline task's steps that have finished (succeeded or failed), of all
// its steps (none until the workflow has created them).
func stepsFinished(ctx context.Context, store *pipelinedb.Store, taskID string) (done, total int, err error) {
	task, err := store.GetTask(ctx, taskID)
	if err != nil {
		return 0, 0, err
	}
	steps, err := store.StepsOf(ctx, task)
	if err != nil {
		return 0, 0, err
	}
	for _, s := range steps {
		if s.Status == pipeline.StatusSuccess || s.Status == pipeline.StatusFailed {
			done++
		}
	}
	return done, len(steps), nil
}

// printTask prints a task with its steps as GET /api/v1/pipeline-tasks/{id} answers.
func printTask(ctx context.Context, c *cobra.Command, store *pipelinedb.Store, id string) error {
	task, err := store.GetTask(ctx, id)
	if errors.Is(err, pipeline.ErrNotFound) {
		return fmt.Errorf("pipeline task %q not found", id)
	}
	if err != nil {
		return err
	}
	steps, err := store.StepsOf(ctx, task)
	if err != nil {
		return err
	}
	if steps == nil {
		steps = []pipeline.StepRecord{}
	}
	return render(c, struct {
		*pipeline.Task
		Steps []pipeline.StepRecord `json:"steps"`
	}{task, steps})
}

// startError says in one sentence why a task was not created, naming the flag or the pipeline.
func startError(err error, req pipelinewf.StartRequest) error {
	switch {
	case errors.Is(err, pipeline.ErrInvalidInput):
		return fmt.Errorf("--input: %s", err.Error())
	case errors.Is(err, pipeline.ErrNotFound) && req.Version != "":
		return fmt.Errorf("pipeline %q version %q not found", req.Pipeline, req.Version)
	case errors.Is(err, pipeline.ErrNotFound):
		return fmt.Errorf("pipeline %q not found", req.Pipeline)
	case errors.Is(err, pipeline.ErrQuotaExhausted):
		return fmt.Errorf("quota of user %q, feature %q is exhausted", req.UserID, req.FeatureID)
	case errors.Is(err, pipeline.ErrIdempotencyConflict):
		return errors.New("--idempotency-key was used with a different request; use a new key for a new task")
	}
	return err
}
