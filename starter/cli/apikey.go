package cli

import (
	"context"
	"errors"
	"fmt"

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
				if outputFormat(c) == outputTable {
					fmt.Fprintln(c.ErrOrStderr(), "store the key now: only its hash is kept")
				}
				return render(c, createdKey{Key: k, Plain: plain})
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
			if keys == nil {
				keys = []auth.Key{}
			}
			return render(c, keys)
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
			if errors.Is(err, auth.ErrNotFound) {
				return fmt.Errorf("API key %q not found", args[0])
			}
			if err != nil {
				return err
			}
			return render(c, map[string]any{"id": args[0], "is_active": false})
		},
	}
	cmd.AddCommand(create, list, revoke)
	return cmd
}

// createdKey is a new key: the stored key (the fields key listings show) and, this once, its
// plaintext as "key".
type createdKey struct {
	auth.Key
	Plain string `json:"key"`
}
