package vendors

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
)

// DevQuotaUser and DevQuotaFeature own the demo quota `make dev` grants.
const (
	DevQuotaUser    = "demo-user"
	DevQuotaFeature = "demo-feature"
	devQuotaUnits   = 100
)

// Registrations lists the providers and functions of a fake vendors server at baseURL.
func Registrations(baseURL string) ([]pipeline.Provider, []pipeline.Function) {
	s := &Server{URL: baseURL}
	return s.Providers(), s.Functions()
}

// Seed registers the fakes (only providers and functions that are not registered yet, so a
// real vendor configured by hand is never overwritten), publishes the example pipelines
// from examplesDir (idempotent) and grants the demo quota when it does not exist.
func Seed(ctx context.Context, store *pipelinedb.Store, baseURL, examplesDir string) error {
	providers, functions := Registrations(baseURL)
	for i := range providers {
		if _, err := store.GetProvider(ctx, providers[i].Ref); errors.Is(err, pipeline.ErrNotFound) {
			if _, err := store.PutProvider(ctx, &providers[i]); err != nil {
				return err
			}
		} else if err != nil {
			return err
		}
	}
	for i := range functions {
		if _, err := store.GetFunction(ctx, functions[i].Name); errors.Is(err, pipeline.ErrNotFound) {
			if _, err := store.PutFunction(ctx, &functions[i]); err != nil {
				return err
			}
		} else if err != nil {
			return err
		}
	}
	files, err := filepath.Glob(filepath.Join(examplesDir, "*.json"))
	if err != nil {
		return fmt.Errorf("list example pipelines: %w", err)
	}
	lk, err := store.Lookup(ctx)
	if err != nil {
		return err
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("read example pipeline: %w", err)
		}
		d, err := pipeline.ParseDefinition(raw)
		if err == nil {
			err = pipeline.ValidateDefinition(d, lk)
		}
		if err != nil {
			return fmt.Errorf("example %s: %w", f, err)
		}
		if _, _, err := store.PublishSchema(ctx, d); err != nil && !errors.Is(err, pipeline.ErrSchemaConflict) {
			return err
		}
	}
	if _, err := store.GetQuota(ctx, DevQuotaUser, DevQuotaFeature); errors.Is(err, pipeline.ErrNotFound) {
		_, err = store.SetQuota(ctx, DevQuotaUser, DevQuotaFeature, devQuotaUnits)
		return err
	} else if err != nil {
		return err
	}
	return nil
}
