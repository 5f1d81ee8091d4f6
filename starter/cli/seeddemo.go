package cli

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/taskloom/taskloom/internal/pipeline/pipelinedemo"
)

// seedDemoOptions are seed-demo's flags; each defaults to an environment variable, so the
// command runs with the same settings as the deployment it seeds.
type seedDemoOptions struct {
	apiURL, apiKey, vendorsURL, examples string
}

func seedDemoCmd() *cobra.Command {
	var o seedDemoOptions
	cmd := &cobra.Command{
		Use:   "seed-demo",
		Short: "Load the demo data (providers, SCF function, example pipelines, quota) through a running API",
		Long: `seed-demo registers the fake vendors' providers and the fake SCF function, publishes the example
pipelines and grants the demo quota (demo-user/demo-feature), through the HTTP API of any running
taskloom with an admin key: the data make dev loads in-process. It is idempotent: what exists is
left alone (a provider or function registered by hand for a real vendor too), and a second run
says so. The fakes themselves (go run ./starter/dev pipeline fakes) must run where the
worker reaches them.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			// The environment is read here, not as the flags' defaults: the dev stack's settings
			// (.data/dev.env) are loaded after the flags are made, and --help would print the key.
			o.apiURL = cmp.Or(o.apiURL, os.Getenv("API_PUBLIC_URL"), "http://127.0.0.1:8080")
			o.apiKey = cmp.Or(o.apiKey, os.Getenv("TASKLOOM_ADMIN_KEY"))
			o.vendorsURL = cmp.Or(o.vendorsURL, os.Getenv("PIPELINE_FAKE_VENDORS_URL"))
			if o.apiKey == "" {
				return errors.New("--api-key (or TASKLOOM_ADMIN_KEY) is required: an admin key of the API, e.g. the one `starter setup` printed")
			}
			if o.vendorsURL == "" {
				return errors.New("--vendors-url (or PIPELINE_FAKE_VENDORS_URL) is required: where the fake vendors listen, as the worker reaches them")
			}
			api := &apiClient{base: strings.TrimRight(o.apiURL, "/"), key: o.apiKey, http: &http.Client{Timeout: 30 * time.Second}}
			rows, err := SeedDemo(c.Context(), api, o.vendorsURL, o.examples)
			if err != nil {
				return err
			}
			if outputFormat(c) == outputTable {
				fmt.Fprintf(c.ErrOrStderr(), "run one: curl -s -X POST %s/api/v1/pipeline-tasks -H \"X-API-Key: $TASKLOOM_ADMIN_KEY\" -H 'Content-Type: application/json' "+
					`-d '{"pipeline":"basic_clean_pipeline","user_id":"%s","feature_id":"%s","input_data":{"input_image":"https://cos.example/p/1.jpg"}}'`+"\n",
					api.base, pipelinedemo.DevQuotaUser, pipelinedemo.DevQuotaFeature)
			}
			return render(c, rows)
		},
	}
	cmd.Flags().StringVar(&o.apiURL, "api-url", "", "base URL of the taskloom API (default: env API_PUBLIC_URL, else http://127.0.0.1:8080)")
	cmd.Flags().StringVar(&o.apiKey, "api-key", "", "admin API key (default: env TASKLOOM_ADMIN_KEY)")
	cmd.Flags().StringVar(&o.vendorsURL, "vendors-url", "", "base URL of the fake vendors + fake SCF, as the worker reaches them (default: env PIPELINE_FAKE_VENDORS_URL)")
	cmd.Flags().StringVar(&o.examples, "examples", filepath.Join("testdata", "pipelines"), "directory of the example pipelines (*.json)")
	return cmd
}

// SeededItem is what seed-demo did to one piece of demo data.
type SeededItem struct {
	Kind  string `json:"kind"` // provider, function, pipeline, quota
	Name  string `json:"name"`
	State string `json:"state"` // created, unchanged, re-pointed, kept
	// Detail says why an existing item was kept as it is.
	Detail string `json:"detail,omitempty"`
}

const (
	stateRepointed = "re-pointed"
	// stateKept is an item that exists with other content (a real vendor's registration, another
	// definition of the example's version): seeding never overwrites it.
	stateKept = "kept"
)

// SeedDemo loads vendors' demo data (the definition Seed loads in-process) through api: the
// fakes at vendorsURL, the example pipelines of examplesDir and the demo quota.
func SeedDemo(ctx context.Context, api *apiClient, vendorsURL, examplesDir string) ([]SeededItem, error) {
	examples, err := pipelinedemo.Examples(examplesDir)
	if err != nil {
		return nil, err
	}
	if len(examples) == 0 {
		return nil, fmt.Errorf("no example pipelines (*.json) in %s: run from the repository root or pass --examples", examplesDir)
	}
	var rows []SeededItem
	providers, functions := pipelinedemo.Registrations(vendorsURL)
	for _, p := range providers {
		row, err := seedRegistration(ctx, api, "provider", "/api/v1/providers/"+p.Ref, "/"+p.Ref,
			"base_url", p.BaseURL, map[string]any{"base_url": p.BaseURL, "health_url": p.HealthURL})
		if err != nil {
			return rows, err
		}
		rows = append(rows, row)
	}
	for _, f := range functions {
		row, err := seedRegistration(ctx, api, "function", "/api/v1/functions/"+f.Name, "/scf/"+f.Name,
			"invoke_url", f.InvokeURL, map[string]any{"invoke_url": f.InvokeURL})
		if err != nil {
			return rows, err
		}
		rows = append(rows, row)
	}
	for _, ex := range examples {
		row, err := publishExample(ctx, api, ex)
		if err != nil {
			return rows, err
		}
		rows = append(rows, row)
	}
	row, err := grantDemoQuota(ctx, api)
	if err != nil {
		return rows, err
	}
	return append(rows, row), nil
}

// seedRegistration registers a provider or function at path unless it exists: one that points
// at urlField's value already is unchanged, one a fakes server elsewhere registered is re-pointed
// (pipelinedemo.Repoint, with its provider health handed back to the periodic check), anything else is
// kept.
func seedRegistration(ctx context.Context, api *apiClient, kind, path, fakePath, urlField, want string, body map[string]any) (SeededItem, error) {
	row := SeededItem{Kind: kind, Name: path[strings.LastIndex(path, "/")+1:]}
	var old map[string]any
	status, err := api.do(ctx, http.MethodGet, path, nil, &old)
	if err != nil {
		return row, err
	}
	switch {
	case status == http.StatusNotFound:
		row.State = stateCreated
	case status != http.StatusOK:
		return row, fmt.Errorf("GET %s: status %d", path, status)
	case old[urlField] == want:
		row.State = stateUnchanged
		return row, nil
	case !pipelinedemo.Repoint(fmt.Sprint(old[urlField]), want, fakePath):
		row.State, row.Detail = stateKept, fmt.Sprintf("registered at %v", old[urlField])
		return row, nil
	default:
		row.State = stateRepointed
	}
	if err := api.expect(ctx, http.MethodPut, path, body, http.StatusOK); err != nil {
		return row, err
	}
	if row.State == stateRepointed && kind == "provider" && !pinned(old) {
		// Its health measured the old address.
		if err := api.expect(ctx, http.MethodPut, path+"/health", map[string]any{"status": "auto"}, http.StatusOK); err != nil {
			return row, err
		}
	}
	return row, nil
}

// pinned reports whether a provider view's health was set by an operator.
func pinned(provider map[string]any) bool {
	h, _ := provider["health"].(map[string]any)
	p, _ := h["pinned"].(bool)
	return p
}

// publishExample publishes one example pipeline: 201 is new, 200 the same definition already
// published, 409 another definition under the example's name and version (kept).
func publishExample(ctx context.Context, api *apiClient, ex pipelinedemo.Example) (SeededItem, error) {
	row := SeededItem{Kind: "pipeline", Name: strings.TrimSuffix(filepath.Base(ex.File), ".json")}
	status, err := api.do(ctx, http.MethodPost, "/api/v1/pipelines", json.RawMessage(ex.JSON), nil)
	if err != nil {
		return row, err
	}
	switch status {
	case http.StatusCreated:
		row.State = stateCreated
	case http.StatusOK:
		row.State = stateUnchanged
	case http.StatusConflict:
		row.State, row.Detail = stateKept, "another definition of this version is published"
	default:
		return row, fmt.Errorf("publish example %s: status %d", ex.File, status)
	}
	return row, nil
}

// grantDemoQuota grants the demo quota when the demo user has none; a quota in use is left alone.
func grantDemoQuota(ctx context.Context, api *apiClient) (SeededItem, error) {
	path := "/api/v1/quotas/" + url.PathEscape(pipelinedemo.DevQuotaUser) + "/" + url.PathEscape(pipelinedemo.DevQuotaFeature)
	row := SeededItem{Kind: "quota", Name: pipelinedemo.DevQuotaUser + "/" + pipelinedemo.DevQuotaFeature, State: stateUnchanged}
	status, err := api.do(ctx, http.MethodGet, path, nil, nil)
	if err != nil || status == http.StatusOK {
		return row, err
	}
	if status != http.StatusNotFound {
		return row, fmt.Errorf("GET %s: status %d", path, status)
	}
	row.State = stateCreated
	return row, api.expect(ctx, http.MethodPut, path, map[string]any{"remaining": pipelinedemo.DevQuotaUnits}, http.StatusOK)
}

// apiClient calls the taskloom HTTP API with an API key.
type apiClient struct {
	base, key string
	http      *http.Client
}

// do sends body as JSON and decodes a 2xx answer into out (when not nil); it returns the status
// and the answer. A refused key or a server error is an error; callers decide on other statuses.
func (a *apiClient) do(ctx context.Context, method, path string, body, out any) (int, error) {
	status, _, err := a.send(ctx, method, path, body, out)
	return status, err
}

// expect is do that fails, with the API's error envelope, unless the answer is status want.
func (a *apiClient) expect(ctx context.Context, method, path string, body any, want int) error {
	status, raw, err := a.send(ctx, method, path, body, nil)
	if err == nil && status != want {
		err = fmt.Errorf("%s %s: status %d, want %d: %s", method, path, status, want, raw)
	}
	return err
}

func (a *apiClient) send(ctx context.Context, method, path string, body, out any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("X-API-Key", a.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.http.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, a.base+path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return resp.StatusCode, nil, fmt.Errorf("%s %s: read answer: %w", method, path, err)
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return resp.StatusCode, raw, fmt.Errorf("%s %s: %d: the API key is not an admin key of %s: %s", method, path, resp.StatusCode, a.base, raw)
	case resp.StatusCode >= 500:
		return resp.StatusCode, raw, fmt.Errorf("%s %s: %d: %s", method, path, resp.StatusCode, raw)
	case out != nil && resp.StatusCode/100 == 2:
		if err := json.Unmarshal(raw, out); err != nil {
			return resp.StatusCode, raw, fmt.Errorf("%s %s: decode answer: %w", method, path, err)
		}
	}
	return resp.StatusCode, raw, nil
}
