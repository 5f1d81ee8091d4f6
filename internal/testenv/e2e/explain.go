package e2e

import (
	"context"
	"time"

	sdkpb "go.temporal.io/api/sdk/v1"
)

// Explained is what an execution shows an operator (docs/operations.md "What each execution shows"): the
// static summary and details from DescribeWorkflowExecution, and the current details from the
// SDK's built-in metadata query (a closed execution answers it by replay).
type Explained struct {
	Summary, Details, Current string
}

// Explain reads the latest run of workflowID's user metadata, failing the test when Temporal
// does not answer.
func (e *Env) Explain(workflowID string) Explained {
	e.T.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer cancel()
	c := e.Platform.Temporal
	d, err := c.DescribeWorkflow(ctx, workflowID, "")
	if err != nil {
		e.T.Fatalf("describe %s: %v", workflowID, err)
	}
	var out Explained
	if out.Summary, err = d.GetStaticSummary(); err != nil {
		e.T.Fatalf("static summary of %s: %v", workflowID, err)
	}
	if out.Details, err = d.GetStaticDetails(); err != nil {
		e.T.Fatalf("static details of %s: %v", workflowID, err)
	}
	v, err := c.QueryWorkflow(ctx, workflowID, "", "__temporal_workflow_metadata")
	if err != nil {
		e.T.Fatalf("metadata query of %s: %v", workflowID, err)
	}
	var md sdkpb.WorkflowMetadata
	if err := v.Get(&md); err != nil {
		e.T.Fatalf("decode metadata of %s: %v", workflowID, err)
	}
	out.Current = md.GetCurrentDetails()
	return out
}
