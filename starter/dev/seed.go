package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/taskloom/taskloom/internal/devstack/fakes/telegram"
	"github.com/taskloom/taskloom/internal/devstack/fakes/vendors"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedemo"
	"github.com/taskloom/taskloom/internal/platform"
	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/demo"
)

// devEntrySeed publishes the demo pipeline entry_echo over the fake assistant, grants the entry
// quota account units, and returns the curls that exercise the intake.
func devEntrySeed(ctx context.Context, p *platform.Platform, adminKey string) ([]string, error) {
	c := p.Config.Entry
	if c.TelegramBotToken != devBotToken {
		return nil, nil // a real bot: the operator publishes the pipelines it uses
	}
	store := pipelinedb.New(p.Mongo)
	if _, err := store.PutProvider(ctx, &pipeline.Provider{Ref: pipelinedemo.EntryProvider, BaseURL: c.TelegramAPIBaseURL + telegram.AssistantPath}); err != nil {
		return nil, err
	}
	if _, _, err := store.PublishSchema(ctx, pipelinedemo.EntryDefinition()); err != nil && !errors.Is(err, pipeline.ErrSchemaConflict) {
		return nil, fmt.Errorf("publish %s: %w", pipelinedemo.EntryPipeline, err)
	}
	if q, err := store.GetQuota(ctx, c.UserID, c.FeatureID); err != nil || q.Remaining < pipelinedemo.EntryQuotaMin {
		if _, err := store.SetQuota(ctx, c.UserID, c.FeatureID, pipelinedemo.EntryQuotaUnits); err != nil {
			return nil, err
		}
	}
	api := "http://" + p.Config.API.Addr
	return []string{
		fmt.Sprintf("entry: pipeline %s (quota %s/%s); Telegram fake messages at %s/_admin/messages", pipelinedemo.EntryPipeline, c.UserID, c.FeatureID, c.TelegramAPIBaseURL),
		fmt.Sprintf(`  curl -s -X POST %s/api/workflows/apply -H 'X-API-Key: %s' -H 'Content-Type: application/json' `+
			`-d '{"workflowId":"%s","userText":"hello","historyChunks":[],"coreEnvelope":{"metadata":{"chat_id":"demo-1"}},"waitForResult":true}'`,
			api, adminKey, pipelinedemo.EntryPipeline),
		fmt.Sprintf(`  curl -s -X POST %s/telegram/webhook -H 'X-Telegram-Bot-Api-Secret-Token: %s' -H 'Content-Type: application/json' `+
			`-d '{"update_id":1,"message":{"message_id":1,"date":0,"chat":{"id":42,"type":"private"},"text":"hi bot"}}'`,
			api, c.TelegramWebhookSecret),
		fmt.Sprintf("  curl -s %s/internal/tasks/stats -H 'X-API-Key: %s'", api, adminKey),
	}, nil
}

// devPipelineSeed registers the fakes, publishes the three example pipelines (testdata/pipelines) and grants the demo
// quota, and returns the curl that runs one.
func devPipelineSeed(ctx context.Context, p *platform.Platform, adminKey string) ([]string, error) {
	if p.Config.Pipeline.FakeVendorsURL == "" {
		return nil, errors.New("pipeline: fake vendors are not running")
	}
	store := pipelinedb.New(p.Mongo)
	if err := vendors.Seed(ctx, store, p.Config.Pipeline.FakeVendorsURL, filepath.Join("testdata", "pipelines")); err != nil {
		return nil, fmt.Errorf("seed pipelines: %w", err)
	}
	api := "http://" + p.Config.API.Addr
	return []string{
		"pipelines: basic_clean_pipeline, model_pose12_pipeline, collection_video_pipeline (quota: demo-user/demo-feature)",
		fmt.Sprintf(`  curl -s -X POST %s/api/v1/pipeline-tasks -H 'X-API-Key: %s' -H 'Content-Type: application/json' `+
			`-d '{"pipeline":"collection_video_pipeline","user_id":"%s","feature_id":"%s","input_data":{"product_images":["https://cos.example/p/1.jpg","https://cos.example/p/2.jpg"],"background_music":"https://cos.example/bgm.mp3"}}'`,
			api, adminKey, pipelinedemo.DevQuotaUser, pipelinedemo.DevQuotaFeature),
		fmt.Sprintf("  curl -s %s/api/v1/pipeline-tasks/TASK_ID -H 'X-API-Key: %s'", api, adminKey),
	}, nil
}

// devEchoSeed loads the demo project with server tasks through svc for `make dev` and prints the
// pull curls.
func devEchoSeed(svc *taskecho.Server) devSeeder {
	return func(ctx context.Context, p *platform.Platform, adminKey string) ([]string, error) {
		if _, err := demo.Seed(ctx, svc); err != nil {
			return nil, err
		}
		lines := []string{"Echo: pull the demo project's server tasks (project level, then its queue):"}
		for _, c := range demo.PullCurls("http://"+p.Config.API.Addr, adminKey) {
			lines = append(lines, "  "+c)
		}
		return lines, nil
	}
}
