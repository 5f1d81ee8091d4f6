package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/taskloom/taskloom/api"
	"github.com/taskloom/taskloom/internal/platform"
	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/worker"
)

func workerCmd() *cobra.Command {
	return &cobra.Command{
		Use:         "worker",
		Short:       "Run the Temporal worker (every workflow, activity and Kafka consumer)",
		Args:        cobra.NoArgs,
		Annotations: map[string]string{alwaysLogs: "true"},
		RunE:        func(cmd *cobra.Command, _ []string) error { return serve(cmd, worker.Run) },
	}
}

func apiCmd() *cobra.Command {
	return &cobra.Command{
		Use:         "api",
		Short:       "Run the HTTP API on API_ADDR",
		Args:        cobra.NoArgs,
		Annotations: map[string]string{alwaysLogs: "true"},
		RunE:        func(cmd *cobra.Command, _ []string) error { return serve(cmd, api.Run) },
	}
}

// serve runs a process (the API or the worker) over a connected platform and the process's one
// echo service. Unlike withSchema it does not ensure the indexes first: the process does that
// itself with its start-up policy (schema.AtStart).
func serve(c *cobra.Command, run func(context.Context, *platform.Platform, *taskecho.Server) error) error {
	return withPlatform(c, overEcho(run))
}
