package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/fakes/vendors"
	domain "github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/platform"
	pipelinewf "github.com/taskloom/taskloom/workflows/pipeline"
)

func pipelineCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pipeline",
		Short: "Vendor pipelines (seed 003): publish schemas, run and inspect tasks, run the fake vendors",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(pipelinePublishCmd(), pipelineRunCmd(), pipelineShowCmd(), pipelineFakesCmd())
	return cmd
}

func pipelinePublishCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "publish FILE...",
		Short: "Validate and publish pipeline definitions ({name, version, schema} JSON files)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, files []string) error {
			return withPlatform(c, func(ctx context.Context, p *platform.Platform) error {
				store := domain.NewStore(p.Mongo)
				lk, err := store.Lookup(ctx)
				if err != nil {
					return err
				}
				for _, f := range files {
					raw, err := os.ReadFile(f)
					if err != nil {
						return err
					}
					d, err := domain.ParseDefinition(raw)
					if err == nil {
						err = domain.ValidateDefinition(d, lk)
					}
					if err != nil {
						return fmt.Errorf("%s: %w", f, err)
					}
					_, created, err := store.PublishSchema(ctx, d)
					if err != nil {
						return fmt.Errorf("%s: %w", f, err)
					}
					verb := "published"
					if !created {
						verb = "already published"
					}
					fmt.Fprintf(c.OutOrStdout(), "%s %s@%s\n", verb, d.Name, d.Version)
				}
				return nil
			})
		},
	}
}

func pipelineRunCmd() *cobra.Command {
	var (
		req   pipelinewf.StartRequest
		input string
		wait  time.Duration
	)
	cmd := &cobra.Command{
		Use:   "run PIPELINE",
		Short: "Start a pipeline task (consumes one quota unit) and optionally wait for it",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			req.Pipeline = args[0]
			if err := json.Unmarshal([]byte(input), &req.InputData); err != nil {
				return fmt.Errorf("--input must be a JSON object: %w", err)
			}
			return withPlatform(c, func(ctx context.Context, p *platform.Platform) error {
				store := domain.NewStore(p.Mongo)
				st := &pipelinewf.Starter{Store: store, Temporal: p.Temporal, TaskQueue: p.Config.Temporal.TaskQueue}
				task, err := st.Start(ctx, req)
				if err != nil {
					return err
				}
				fmt.Fprintf(c.OutOrStdout(), "task %s started (workflow %s)\n", task.ID, task.WorkflowID)
				if wait <= 0 {
					return nil
				}
				wctx, cancel := context.WithTimeout(ctx, wait)
				defer cancel()
				_ = p.Temporal.GetWorkflow(wctx, task.WorkflowID, "").Get(wctx, nil)
				return printTask(ctx, c, store, task.ID)
			})
		},
	}
	cmd.Flags().StringVar(&req.Version, "version", "", "pipeline version (default: latest)")
	cmd.Flags().StringVar(&req.UserID, "user", vendors.DevQuotaUser, "user_id whose quota is consumed")
	cmd.Flags().StringVar(&req.FeatureID, "feature", vendors.DevQuotaFeature, "feature_id of the quota")
	cmd.Flags().StringVar(&input, "input", "{}", "input_data as a JSON object")
	cmd.Flags().DurationVar(&wait, "wait", 0, "wait up to this long for the task to finish, then print it")
	return cmd
}

func pipelineShowCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "show TASK_ID",
		Short: "Print a pipeline task with its steps",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return withPlatform(c, func(ctx context.Context, p *platform.Platform) error {
				return printTask(ctx, c, domain.NewStore(p.Mongo), args[0])
			})
		},
	}
}

func printTask(ctx context.Context, c *cobra.Command, store *domain.Store, id string) error {
	task, err := store.GetTask(ctx, id)
	if err != nil {
		return err
	}
	steps, err := store.ListSteps(ctx, id)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(c.OutOrStdout())
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]any{"task": task, "steps": steps})
}

func pipelineFakesCmd() *cobra.Command {
	var addr string
	cmd := &cobra.Command{
		Use:   "fakes",
		Short: "Run the fake vendors and the fake SCF video-compositor until interrupted",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			cfg, err := config.Load()
			if err != nil {
				return err
			}
			s, err := vendors.Start(addr, vendors.Options{Secret: cfg.Pipeline.Secret()})
			if err != nil {
				return err
			}
			defer s.Close()
			fmt.Fprintf(c.OutOrStdout(), "fake vendors on %s (set PIPELINE_FAKE_VENDORS_URL=%s)\n", s.URL, s.URL)
			ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt)
			defer stop()
			<-ctx.Done()
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8091", "listen address")
	return cmd
}

// devWatermarkVar is the allow-listed variable the third seed example reads.
const devWatermarkVar = "WATERMARK_URL"

// devPipelineFakes starts the fake vendors and SCF for `make dev` unless PIPELINE_FAKE_VENDORS_URL
// points at running ones. The fake SCF signs callbacks with the API's callback secret. It serves
// until the dev process exits.
func devPipelineFakes(_ context.Context, cfg *config.Config, _ *slog.Logger) (string, string, error) {
	if cfg.Pipeline.FakeVendorsURL != "" {
		return "pipeline vendors", cfg.Pipeline.FakeVendorsURL, nil
	}
	s, err := vendors.Start("127.0.0.1:0", vendors.Options{Secret: cfg.Pipeline.Secret()})
	if err != nil {
		return "", "", err
	}
	cfg.Pipeline.FakeVendorsURL = s.URL
	// The seed's collection_video_pipeline reads ${env.WATERMARK_URL}; give the demo one.
	if _, ok := os.LookupEnv(devWatermarkVar); !ok {
		if err := os.Setenv(devWatermarkVar, s.URL+"/assets/watermark.png"); err != nil {
			return "", "", err
		}
	}
	return "pipeline vendors + SCF", s.URL, nil
}

// devPipelineSeed registers the fakes, publishes the seed's three examples and grants the demo
// quota, and returns the curl that runs one.
func devPipelineSeed(ctx context.Context, p *platform.Platform, adminKey string) ([]string, error) {
	if p.Config.Pipeline.FakeVendorsURL == "" {
		return nil, errors.New("pipeline: fake vendors are not running")
	}
	store := domain.NewStore(p.Mongo)
	if err := store.EnsureIndexes(ctx); err != nil {
		return nil, err
	}
	if err := vendors.Seed(ctx, store, p.Config.Pipeline.FakeVendorsURL, filepath.Join("testdata", "pipelines")); err != nil {
		return nil, fmt.Errorf("seed pipelines: %w", err)
	}
	api := "http://" + p.Config.API.Addr
	return []string{
		"pipelines: basic_clean_pipeline, model_pose12_pipeline, collection_video_pipeline (quota: demo-user/demo-feature)",
		fmt.Sprintf(`  curl -s -X POST %s/api/v1/pipeline-tasks -H 'X-API-Key: %s' -H 'Content-Type: application/json' `+
			`-d '{"pipeline":"collection_video_pipeline","user_id":"%s","feature_id":"%s","input_data":{"product_images":["https://cos.example/p/1.jpg","https://cos.example/p/2.jpg"],"background_music":"https://cos.example/bgm.mp3"}}'`,
			api, adminKey, vendors.DevQuotaUser, vendors.DevQuotaFeature),
		fmt.Sprintf("  curl -s %s/api/v1/pipeline-tasks/TASK_ID -H 'X-API-Key: %s'", api, adminKey),
	}, nil
}
