package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/taskloom/taskloom/api"
	"github.com/taskloom/taskloom/internal/platform"
)

func codecServerCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "codec-server",
		Short: "Serve /encode and /decode on CODEC_SERVER_ADDR for the Temporal Web UI and CLI",
		Long: `codec-server decodes the payloads that TEMPORAL_CODEC_KEYS encrypts, for operators:
point the Temporal Web UI's codec endpoint, or ` + "`temporal --codec-endpoint URL --codec-auth 'Bearer KEY'`" + `,
at it. Every request needs an admin API key; browsers may call it from CODEC_SERVER_CORS_ORIGINS
(default: the origin of TEMPORAL_UI_URL).`,
		Args:        cobra.NoArgs,
		Annotations: map[string]string{alwaysLogs: "true"},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withPlatform(cmd, func(ctx context.Context, p *platform.Platform) error {
				return api.RunCodecServer(ctx, p)
			})
		},
	}
}
