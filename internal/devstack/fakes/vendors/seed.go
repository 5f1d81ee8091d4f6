package vendors

import (
	"context"
	"errors"
	"fmt"

	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedemo"
)

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

// Seed registers the fakes, publishes the example pipelines from examplesDir (idempotent) and
// grants the demo quota when it does not exist. A provider or function that is not registered
// yet is registered; one registered for a fakes server at another loopback address (an earlier
// run whose fakes listened elsewhere) is re-pointed at baseURL, and a re-pointed provider's
// unpinned health starts over as up, since it measured the old address; any other registration
// (a real vendor configured by hand) is left alone.
func Seed(ctx context.Context, store *pipelinedb.Store, baseURL, examplesDir string) error {
	providers, functions := pipelinedemo.Registrations(baseURL)
	for i := range providers {
		p := &providers[i]
		old, err := store.GetProvider(ctx, p.Ref)
		repoint := err == nil
		switch {
		case errors.Is(err, pipeline.ErrNotFound):
		case err != nil:
			return err
		case !pipelinedemo.Repoint(old.BaseURL, p.BaseURL, "/"+p.Ref):
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
		case !pipelinedemo.Repoint(old.InvokeURL, f.InvokeURL, "/scf/"+f.Name):
			continue
		}
		if _, err := store.PutFunction(ctx, f); err != nil {
			return err
		}
	}
	examples, err := pipelinedemo.Examples(examplesDir)
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
	if _, err := store.GetQuota(ctx, pipelinedemo.DevQuotaUser, pipelinedemo.DevQuotaFeature); errors.Is(err, pipeline.ErrNotFound) {
		_, err = store.SetQuota(ctx, pipelinedemo.DevQuotaUser, pipelinedemo.DevQuotaFeature, pipelinedemo.DevQuotaUnits)
		return err
	} else if err != nil {
		return err
	}
	return nil
}
