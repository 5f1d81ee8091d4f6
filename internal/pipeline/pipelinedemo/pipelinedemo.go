// Package pipelinedemo is the pipeline demo data as data: the example pipelines, the registrations
// of a fake vendors server and the demo quota. The dev stack loads it in-process (vendors.Seed) and
// `starter seed-demo` over the HTTP API, so the production binary carries the definition without
// linking the fakes themselves.
package pipelinedemo

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"github.com/taskloom/taskloom/internal/pipeline"
)

// The provider refs of the example pipelines, plus the two misbehaving ones of the dev stack, and
// the SCF function of collection_video_pipeline: the names a fake vendors server answers to.
var (
	ExampleProviders = []string{"tencent_cloud_infinite", "aliyun_image_ai", "runninghub", "stable_diffusion_api", "tencent_cloud_vod"}
	FailingVendor    = "flaky_vendor"
	SlowVendor       = "slow_vendor"
	SCFCompositor    = "video-compositor"
)

// The demo data is one definition, loaded in-process by vendors.Seed (`make dev`, tests, the bench) and
// over the HTTP API by `starter seed-demo`: the fakes' Registrations, the example pipelines
// (Examples) and this quota, granted to DevQuotaUser for DevQuotaFeature when it has none.
const (
	DevQuotaUser    = "demo-user"
	DevQuotaFeature = "demo-feature"
	DevQuotaUnits   = 100
)

// Example is one example pipeline: its file and its definition as POST /api/v1/pipelines takes it.
type Example struct {
	File string
	JSON []byte
}

// Examples reads the example pipelines (*.json) of dir, in name order.
func Examples(dir string) ([]Example, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, fmt.Errorf("list example pipelines: %w", err)
	}
	out := make([]Example, len(files))
	for i, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("read example pipeline: %w", err)
		}
		out[i] = Example{File: f, JSON: raw}
	}
	return out, nil
}

// Repoint reports whether a registration at oldURL is to be moved to newURL: only one that
// Registrations gave for a fakes server at another loopback address (an earlier run whose fakes
// listened elsewhere); path is the registration's path (/{provider} or /scf/{function}). Any
// other registration (a real vendor configured by hand) is left alone.
func Repoint(oldURL, newURL, path string) bool {
	return oldURL != newURL && fakeURL(oldURL, path)
}

// fakeURL reports whether u is what Registrations gives for a fakes server on the loopback, at
// any port: path is the registration's path (/{provider} or /scf/{function}).
func fakeURL(u, path string) bool {
	p, err := url.Parse(u)
	if err != nil {
		return false
	}
	h := p.Hostname()
	return p.Scheme == "http" && (h == "127.0.0.1" || h == "localhost") && p.Path == path && p.RawQuery == ""
}

// Registrations lists the providers and functions of a fake vendors server at baseURL.
func Registrations(baseURL string) ([]pipeline.Provider, []pipeline.Function) {
	refs := append(append([]string{}, ExampleProviders...), FailingVendor, SlowVendor)
	providers := make([]pipeline.Provider, len(refs))
	for i, r := range refs {
		providers[i] = pipeline.Provider{Ref: r, BaseURL: baseURL + "/" + r, HealthURL: baseURL + "/" + r + "/health"}
	}
	return providers, []pipeline.Function{{Name: SCFCompositor, InvokeURL: baseURL + "/scf/" + SCFCompositor}}
}

// The entry demo: the pipeline a Telegram update or an apply starts under `make dev` and `make
// cluster`, one step asking the fake Telegram's assistant (EntryProvider) for a reply.
const (
	EntryPipeline = "entry_echo"
	EntryProvider = "entry_assistant"
	// EntryQuotaUnits is granted to the entry account (ENTRY_USER_ID/ENTRY_FEATURE_ID) when it
	// has fewer than EntryQuotaMin left.
	EntryQuotaUnits = 1000
	EntryQuotaMin   = 100
)

// EntryDefinition is the entry demo pipeline.
func EntryDefinition() *pipeline.Definition {
	return &pipeline.Definition{Name: EntryPipeline, Version: pipeline.DefaultVersion, Schema: pipeline.Schema{Steps: []pipeline.Step{{
		Name: "assistant_reply", Type: pipeline.StepSyncAPI, ProviderRef: EntryProvider, Endpoint: "/reply",
		InputMapping:  map[string]any{"text": "${input_data.user_text}", "history": "${input_data.history_chunks}"},
		OutputMapping: map[string]string{"text": "$.reply", "history_len": "history_len"}, TimeoutSeconds: 30,
	}}}}
}
