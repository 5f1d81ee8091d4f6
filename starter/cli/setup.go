package cli

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/platform"
	"github.com/taskloom/taskloom/internal/schema"
	"github.com/taskloom/taskloom/internal/searchattr"
)

func setupCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "setup",
		Short: "Prepare a deployment: namespace check, search attributes, indexes, schedules, first admin key",
		Long: `setup prepares the configured Temporal namespace, MongoDB and schedules for taskloom, and
prints the first admin API key once. Run it before the first start of the API and the worker, and
after every upgrade; it is idempotent: a second run changes nothing and says so.

It fails without changing anything on Temporal when the namespace does not exist, and prints the
exact temporal operator commands to run when the server refuses to register search attributes
(Temporal Cloud, or a key without operator rights).`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return withPlatform(c, func(ctx context.Context, p *platform.Platform) error {
				steps, err := Setup(ctx, p)
				if err != nil {
					return err
				}
				if outputFormat(c) == outputTable {
					for _, s := range steps {
						if s.Step == stepAdminKey && s.State == stateCreated && p.Config.API.AdminKey == "" {
							fmt.Fprintln(c.ErrOrStderr(), "store the admin key now: only its hash is kept, and setup never prints it again")
						}
					}
					if !changed(steps) {
						fmt.Fprintln(c.ErrOrStderr(), "setup: everything was already in place; nothing changed")
					}
				}
				return render(c, steps)
			})
		},
	}
}

// SetupStep is what one step of Setup found or did.
type SetupStep struct {
	Step  string `json:"step"`
	State string `json:"state"` // stateCreated, stateUnchanged or stateUpdated
	// Detail names what the step created or checked; for a created admin key, the key itself.
	Detail string `json:"detail"`
}

const (
	stateCreated   = "created"
	stateUnchanged = "unchanged"
	// stateUpdated is a schedule set that existed and was re-applied to the current configuration.
	stateUpdated = "re-applied"

	stepAdminKey = "admin key"
)

// changed reports whether any step created something.
func changed(steps []SetupStep) bool {
	return slices.ContainsFunc(steps, func(s SetupStep) bool { return s.State == stateCreated })
}

// Setup prepares p's deployment, step by step, and stops at the first step that fails: the
// namespace must exist, then search attributes, indexes, schedules and the first admin key are
// ensured. Each step is idempotent.
func Setup(ctx context.Context, p *platform.Platform) ([]SetupStep, error) {
	steps := []func(context.Context, *platform.Platform) (SetupStep, error){
		checkNamespace, ensureSearchAttributes, ensureIndexes, ensureSchedules, ensureAdminKey,
	}
	var done []SetupStep
	for _, step := range steps {
		s, err := step(ctx, p)
		if err != nil {
			return done, err
		}
		done = append(done, s)
	}
	return done, nil
}

// checkNamespace fails with the command that creates the namespace when it does not exist:
// setup never creates one itself, since its retention (and on Temporal Cloud, its region and
// account) is the operator's decision.
func checkNamespace(ctx context.Context, p *platform.Platform) (SetupStep, error) {
	c := p.Config.Temporal
	_, err := p.Temporal.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: c.Namespace})
	var missing *serviceerror.NamespaceNotFound
	if errors.As(err, &missing) {
		return SetupStep{}, fmt.Errorf("temporal namespace %q does not exist on %s; create it (retention as you need), then run setup again:\n  temporal operator namespace create --namespace %s --retention 72h %s",
			c.Namespace, c.Address, c.Namespace, temporalCLIFlags(c))
	}
	if err != nil {
		return SetupStep{}, fmt.Errorf("describe temporal namespace %q on %s: %w", c.Namespace, c.Address, err)
	}
	return SetupStep{Step: "namespace", State: stateUnchanged, Detail: c.Namespace + " exists on " + c.Address}, nil
}

// ensureSearchAttributes registers every attribute of searchattr.Registered the namespace lacks.
// When the server refuses (Temporal Cloud's operator API, a key without operator rights), the
// error lists the temporal operator commands that register the missing ones.
func ensureSearchAttributes(ctx context.Context, p *platform.Platform) (SetupStep, error) {
	want, err := searchattr.Types()
	if err != nil {
		return SetupStep{}, err
	}
	c := p.Config.Temporal
	ops := p.Temporal.OperatorService()
	have, err := ops.ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: c.Namespace})
	if err != nil {
		return SetupStep{}, searchAttributesRefused(c, want, fmt.Errorf("list search attributes: %w", err))
	}
	missing := map[string]enumspb.IndexedValueType{}
	for name, typ := range want {
		got, ok := have.GetCustomAttributes()[name]
		switch {
		case !ok:
			missing[name] = typ
		case got != typ:
			return SetupStep{}, fmt.Errorf("search attribute %s is registered as %s on namespace %s; taskloom needs %s (an attribute's type cannot change: remove it or use another namespace)",
				name, typeName(got), c.Namespace, typeName(typ))
		}
	}
	if len(missing) == 0 {
		return SetupStep{Step: "search attributes", State: stateUnchanged, Detail: fmt.Sprintf("all %d registered", len(want))}, nil
	}
	_, err = ops.AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{Namespace: c.Namespace, SearchAttributes: missing})
	if err != nil {
		return SetupStep{}, searchAttributesRefused(c, missing, fmt.Errorf("add search attributes: %w", err))
	}
	if err := awaitSearchAttributes(ctx, p, missing); err != nil {
		return SetupStep{}, err
	}
	return SetupStep{Step: "search attributes", State: stateCreated, Detail: strings.Join(slices.Sorted(maps.Keys(missing)), ", ")}, nil
}

// searchAttributesSeen bounds the wait for new search attributes to be usable.
const searchAttributesSeen = 2 * time.Minute

// awaitSearchAttributes returns once a visibility query naming every one of attrs is accepted.
// The frontend learns of added attributes when its namespace cache next refreshes (seconds on
// any cluster whose attribute cache is on, as in production); until then a schedule or workflow
// that sets one is refused, so the schedules step waits for this.
func awaitSearchAttributes(ctx context.Context, p *platform.Platform, attrs map[string]enumspb.IndexedValueType) error {
	conds := make([]string, 0, len(attrs))
	for _, name := range slices.Sorted(maps.Keys(attrs)) {
		v := "'setup-probe'"
		if attrs[name] == enumspb.INDEXED_VALUE_TYPE_INT {
			v = "0"
		}
		conds = append(conds, name+" = "+v)
	}
	req := &workflowservice.CountWorkflowExecutionsRequest{Namespace: p.Config.Temporal.Namespace, Query: strings.Join(conds, " AND ")}
	ctx, cancel := context.WithTimeout(ctx, searchAttributesSeen)
	defer cancel()
	for {
		_, err := p.Temporal.WorkflowService().CountWorkflowExecutions(ctx, req)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("search attributes registered, but the server still refuses a query on them after %s: %w", searchAttributesSeen, err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// searchAttributesRefused is the error of a server that would not list or add search
// attributes: the cause and the commands that register attrs by hand.
func searchAttributesRefused(c config.Temporal, attrs map[string]enumspb.IndexedValueType, cause error) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%v\nthe server refused; register taskloom's search attributes on namespace %s with a user allowed to, then run setup again:", cause, c.Namespace)
	for _, name := range slices.Sorted(maps.Keys(attrs)) {
		fmt.Fprintf(&b, "\n  temporal operator search-attribute create --namespace %s --name %s --type %s %s", c.Namespace, name, typeName(attrs[name]), temporalCLIFlags(c))
	}
	return errors.New(b.String())
}

// typeName is the name the temporal CLI's --type takes (Keyword, Int, …): the enum's short
// String.
func typeName(t enumspb.IndexedValueType) string { return t.String() }

// temporalCLIFlags are the connection flags of the temporal CLI for c; a secret appears as the
// environment variable that holds it, never inline.
func temporalCLIFlags(c config.Temporal) string {
	flags := []string{"--address " + c.Address}
	if c.TLSCertFile != "" {
		flags = append(flags, "--tls-cert-path "+c.TLSCertFile, "--tls-key-path "+c.TLSKeyFile)
	}
	if c.TLSCAFile != "" {
		flags = append(flags, "--tls-ca-path "+c.TLSCAFile)
	}
	if c.APIKey != "" {
		flags = append(flags, `--api-key "$TEMPORAL_API_KEY"`)
	}
	return strings.Join(flags, " ")
}

// ensureIndexes creates every store's indexes (schema.Ensure, as `starter migrate` and the
// processes at start) and says how many were new.
func ensureIndexes(ctx context.Context, p *platform.Platform) (SetupStep, error) {
	before, err := countIndexes(ctx, p.Mongo)
	if err != nil {
		return SetupStep{}, err
	}
	if err := schema.Ensure(ctx, p.Mongo); err != nil {
		return SetupStep{}, err
	}
	after, err := countIndexes(ctx, p.Mongo)
	if err != nil {
		return SetupStep{}, err
	}
	if after == before {
		return SetupStep{Step: "indexes", State: stateUnchanged, Detail: fmt.Sprintf("all %d exist in %s", after, p.Mongo.Name())}, nil
	}
	return SetupStep{Step: "indexes", State: stateCreated, Detail: fmt.Sprintf("%d new in %s (%d in all)", after-before, p.Mongo.Name(), after)}, nil
}

// countIndexes counts the indexes of every collection of db.
func countIndexes(ctx context.Context, db *mongo.Database) (int, error) {
	names, err := db.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		return 0, fmt.Errorf("list collections of %s: %w", db.Name(), err)
	}
	n := 0
	for _, name := range names {
		specs, err := db.Collection(name).Indexes().ListSpecifications(ctx)
		if err != nil {
			return 0, fmt.Errorf("list indexes of %s: %w", name, err)
		}
		n += len(specs)
	}
	return n, nil
}

// ensureSchedules applies every schedule (ApplySchedules, as `starter schedules apply`): new ones
// are created, existing ones re-applied to the current configuration.
func ensureSchedules(ctx context.Context, p *platform.Platform) (SetupStep, error) {
	applied, err := ApplySchedules(ctx, p.Temporal, p.Config)
	if err != nil {
		return SetupStep{}, err
	}
	var created, existing []string
	for _, s := range applied {
		if s.Created {
			created = append(created, s.ID)
		} else {
			existing = append(existing, s.ID)
		}
	}
	if len(created) > 0 {
		return SetupStep{Step: "schedules", State: stateCreated, Detail: strings.Join(created, ", ")}, nil
	}
	return SetupStep{Step: "schedules", State: stateUpdated, Detail: fmt.Sprintf("all %d exist: %s", len(existing), strings.Join(existing, ", "))}, nil
}

// ensureAdminKey makes sure an admin can reach the API. TASKLOOM_ADMIN_KEY, when set, is made an
// active admin key (the operator holds it already: it is not printed). Otherwise a key is created
// and returned only when no active admin key exists, so a re-run never mints or shows another.
func ensureAdminKey(ctx context.Context, p *platform.Platform) (SetupStep, error) {
	store := auth.NewStore(p.Mongo)
	if key := p.Config.API.AdminKey; key != "" {
		if k, err := store.Lookup(ctx, key); err == nil && k.Permission == auth.PermAdmin {
			return SetupStep{Step: stepAdminKey, State: stateUnchanged, Detail: "TASKLOOM_ADMIN_KEY is an active admin key"}, nil
		}
		if err := store.Ensure(ctx, key, "admin", auth.PermAdmin); err != nil {
			return SetupStep{}, err
		}
		return SetupStep{Step: stepAdminKey, State: stateCreated, Detail: "TASKLOOM_ADMIN_KEY stored as an admin key (" + auth.Mask(key) + ")"}, nil
	}
	exists, err := store.HasActive(ctx, auth.PermAdmin)
	if err != nil {
		return SetupStep{}, err
	}
	if exists {
		return SetupStep{Step: stepAdminKey, State: stateUnchanged, Detail: "an active admin key exists (starter apikey list)"}, nil
	}
	_, plain, err := store.Create(ctx, auth.NewKey{Name: "admin", Permission: auth.PermAdmin})
	if err != nil {
		return SetupStep{}, err
	}
	return SetupStep{Step: stepAdminKey, State: stateCreated, Detail: plain}, nil
}
