package cli

import (
	"github.com/spf13/cobra"

	"github.com/taskloom/taskloom/api"
	"github.com/taskloom/taskloom/worker"
)

func workerCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "worker",
		Short: "Run the Temporal worker (every workflow, activity and Kafka consumer)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return withPlatform(cmd, worker.Run) },
	}
}

func apiCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "api",
		Short: "Run the HTTP API on API_ADDR",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return withPlatform(cmd, api.Run) },
	}
}
