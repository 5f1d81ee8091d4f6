package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/taskloom/taskloom/internal/config"
)

// deploymentOptions make the worker a Worker Deployment Version when TEMPORAL_WORKER_VERSIONING
// is on. There is no default versioning behaviour: every workflow type declares Pinned or
// AutoUpgrade where it is registered (workflows/<subsystem>), and the SDK refuses one that does not.
func deploymentOptions(c config.Temporal, buildID string) sdkworker.DeploymentOptions {
	if !c.WorkerVersioning {
		return sdkworker.DeploymentOptions{}
	}
	return sdkworker.DeploymentOptions{UseVersioning: true,
		Version: sdkworker.WorkerDeploymentVersion{DeploymentName: c.DeploymentName, BuildID: buildID}}
}

// setCurrentRetry is how often SetCurrentVersion asks again while the version is not yet known
// to the server (it is registered by its workers' first poll).
const setCurrentRetry = 200 * time.Millisecond

// SetCurrentVersion makes build buildID the current version of the deployment, as
// `temporal worker deployment set-current-version` does: new workflows, and AutoUpgrade ones at
// their next task, run on it; Pinned ones stay on the build they started on. A version exists
// once one of its workers has polled, so this waits for that until ctx ends.
func SetCurrentVersion(ctx context.Context, c client.Client, deployment, buildID string) error {
	h := c.WorkerDeploymentClient().GetHandle(deployment)
	for {
		_, err := h.SetCurrentVersion(ctx, client.WorkerDeploymentSetCurrentVersionOptions{BuildID: buildID})
		if err == nil {
			return nil
		}
		if !notPolledYet(err) {
			return fmt.Errorf("set current version of deployment %s to build %s: %w", deployment, buildID, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("set current version of deployment %s to build %s: no worker of it polled: %w", deployment, buildID, err)
		case <-time.After(setCurrentRetry):
		}
	}
}

// notPolledYet says the deployment or the version is not known yet, or its workers' pollers are
// not yet seen on every task queue: the answers before the version's first poll.
func notPolledYet(err error) bool {
	var nf *serviceerror.NotFound
	var fp *serviceerror.FailedPrecondition
	return errors.As(err, &nf) || errors.As(err, &fp)
}
