package cli

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/platform"
)

func apikeyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "apikey",
		Short: "Create, list and revoke API keys",
	}
	var perm, project string
	create := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a key; its plaintext is printed once",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return withSchema(c, func(ctx context.Context, p *platform.Platform) error {
				store := auth.NewStore(p.Mongo)
				k, plain, err := store.Create(ctx, auth.NewKey{Name: args[0], Permission: auth.Permission(perm), ProjectID: project})
				if err != nil {
					return err
				}
				fmt.Fprintf(c.OutOrStdout(), "id:  %s\nkey: %s\n(store it now: only its hash is kept)\n", k.ID, plain)
				return nil
			})
		},
	}
	create.Flags().StringVar(&perm, "permission", "read", "read | write | admin")
	create.Flags().StringVar(&project, "project", "", "bind the key to one project id (default: all projects)")

	list := &cobra.Command{
		Use:   "list",
		Short: "List keys (masked)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			var keys []auth.Key
			err := withPlatform(c, func(ctx context.Context, p *platform.Platform) (err error) {
				keys, _, err = auth.NewStore(p.Mongo).List(ctx, auth.ListFilter{})
				return err
			})
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tKEY\tPERMISSION\tPROJECT\tACTIVE\tLAST USED")
			for _, k := range keys {
				used := "-"
				if k.LastUsedAt != nil {
					used = k.LastUsedAt.Format(time.RFC3339)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%t\t%s\n", k.ID, k.Name, k.Prefix, k.Permission, k.ProjectID, k.Active, used)
			}
			return tw.Flush()
		},
	}
	revoke := &cobra.Command{
		Use:   "revoke ID",
		Short: "Deactivate a key (kept for audit)",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			err := withPlatform(c, func(ctx context.Context, p *platform.Platform) error {
				return auth.NewStore(p.Mongo).Revoke(ctx, args[0])
			})
			if err != nil {
				return err
			}
			fmt.Fprintln(c.OutOrStdout(), "revoked", args[0])
			return nil
		},
	}
	cmd.AddCommand(create, list, revoke)
	return cmd
}
