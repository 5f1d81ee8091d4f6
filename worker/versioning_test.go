package worker

import (
	"testing"

	"github.com/taskloom/taskloom/internal/config"
)

// Versioning is off unless configured; on, the worker is the given build of the deployment, and
// TEMPORAL_BUILD_ID replaces the binary's version.
func TestDeploymentOptions(t *testing.T) {
	c := config.Defaults().Temporal
	if o := deploymentOptions(c, c.BuildID()); o.UseVersioning {
		t.Fatalf("versioning on by default: %+v", o)
	}
	c.WorkerVersioning, c.BuildIDOverride = true, "2026.11.28"
	o := deploymentOptions(c, c.BuildID())
	if !o.UseVersioning || o.Version.DeploymentName != "taskloom" || o.Version.BuildID != "2026.11.28" {
		t.Fatalf("options %+v", o)
	}
	c.BuildIDOverride = ""
	if c.BuildID() == "" {
		t.Fatal("no build id without TEMPORAL_BUILD_ID")
	}
}
