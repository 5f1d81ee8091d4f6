package vendors

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
)

// The demo data is one definition, loaded in-process by Seed (`make dev`, tests, the bench) and
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

// restartHealth hands a re-pointed provider's health back to the periodic check as up, unless
// an operator pinned it.
func restartHealth(ctx context.Context, store *pipelinedb.Store, ref string) error {
	hs, err := store.GetHealth(ctx, []string{ref})
	if err != nil {
		return err
	}
	if h, ok := hs[ref]; !ok || h.Pinned || h.Status == pipeline.HealthUp {
		return nil
	}
	if _, err := store.SetHealthManual(ctx, ref, pipeline.HealthUp, false); err != nil {
		return fmt.Errorf("restart health of re-pointed provider %s: %w", ref, err)
	}
	return nil
}

// Registrations lists the providers and functions of a fake vendors server at baseURL.
func Registrations(baseURL string) ([]pipeline.Provider, []pipeline.Function) {
	s := &Server{URL: baseURL}
	return s.Providers(), s.Functions()
}

// Seed registers the fakes, publishes the example pipelines from examplesDir (idempotent) and
// grants the demo quota when it does not exist. A provider or function that is not registered
// yet is registered; one registered for a fakes server at another loopback address (an earlier
// run whose fakes listened elsewhere) is re-pointed at baseURL, and a re-pointed provider's
// unpinned health starts over as up, since it measured the old address; any other registration
// (a real vendor configured by hand) is left alone.
func Seed(ctx context.Context, store *pipelinedb.Store, baseURL, examplesDir string) error {
	providers, functions := Registrations(baseURL)
	for i := range providers {
		p := &providers[i]
		old, err := store.GetProvider(ctx, p.Ref)
		repoint := err == nil
		switch {
		case errors.Is(err, pipeline.ErrNotFound):
		case err != nil:
			return err
		case !Repoint(old.BaseURL, p.BaseURL, "/"+p.Ref):
			continue
		}
		if _, err := store.PutProvider(ctx, p); err != nil {
			return err
		}
		if repoint {
			if err := restartHealth(ctx, store, p.Ref); err != nil {
				return err
			}
		}
	}
	for i := range functions {
		f := &functions[i]
		old, err := store.GetFunction(ctx, f.Name)
		switch {
		case errors.Is(err, pipeline.ErrNotFound):
		case err != nil:
			return err
		case !Repoint(old.InvokeURL, f.InvokeURL, "/scf/"+f.Name):
			continue
		}
		if _, err := store.PutFunction(ctx, f); err != nil {
			return err
		}
	}
	examples, err := Examples(examplesDir)
	if err != nil {
		return err
	}
	lk, err := store.Lookup(ctx)
	if err != nil {
		return err
	}
	for _, ex := range examples {
		d, err := pipeline.ParseDefinition(ex.JSON)
		if err == nil {
			err = pipeline.ValidateDefinition(d, lk)
		}
		if err != nil {
			return fmt.Errorf("example %s: %w", ex.File, err)
		}
		if _, _, err := store.PublishSchema(ctx, d); err != nil && !errors.Is(err, pipeline.ErrSchemaConflict) {
			return err
		}
	}
	if _, err := store.GetQuota(ctx, DevQuotaUser, DevQuotaFeature); errors.Is(err, pipeline.ErrNotFound) {
		_, err = store.SetQuota(ctx, DevQuotaUser, DevQuotaFeature, DevQuotaUnits)
		return err
	} else if err != nil {
		return err
	}
	return nil
}
