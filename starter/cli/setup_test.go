package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/searchattr"
	"github.com/taskloom/taskloom/internal/testenv"
)

// setupEnv points the starter's configuration at the package's dev server (namespace ns) and a
// fresh database, and returns the database name.
func setupEnv(t *testing.T, ns string) string {
	t.Helper()
	addr, _ := testenv.Temporal(t)
	db := testenv.Unique("setup_")
	for k, v := range map[string]string{
		"TASKLOOM_ENV": "dev", "TEMPORAL_ADDRESS": addr, "TEMPORAL_NAMESPACE": ns,
		"MONGO_URI": testenv.MongoURI(t), "MONGO_DATABASE": db,
		"REDIS_URL": testenv.RedisURL(t), "REDIS_KEY_PREFIX": db + ":", "KAFKA_BROKERS": "",
		"TASKLOOM_ADMIN_KEY": "",
	} {
		t.Setenv(k, v)
	}
	return db
}

// runStarter runs one starter command and returns its stdout, stderr and error.
func runStarter(args ...string) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	root := Root()
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errOut)
	err = root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// A namespace without taskloom's search attributes (as a fresh self-hosted cluster has it) and
// an empty database: the first setup registers every attribute, creates the indexes and the
// schedules and prints an admin key that works; the second changes nothing, says so, and prints
// no key.
func TestSetupPreparesADeploymentOnceAndPrintsTheAdminKeyOnce(t *testing.T) {
	_, tc := testenv.Temporal(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ns := testenv.Unique("setup-ns-")
	if _, err := tc.WorkflowService().RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
		Namespace: ns, WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	db := setupEnv(t, ns)

	out, errOut, err := runStarter("setup", "-o", "json")
	if err != nil {
		t.Fatalf("first setup: %v\n%s", err, errOut)
	}
	first := decodeSteps(t, out)
	for _, step := range []string{"search attributes", "indexes", "schedules", stepAdminKey} {
		if first[step].State != stateCreated {
			t.Errorf("first run: %s = %+v, want created", step, first[step])
		}
	}
	attrs, err := tc.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := searchattr.Types()
	for name, typ := range want {
		if got, ok := attrs.GetCustomAttributes()[name]; !ok || got != typ {
			t.Errorf("search attribute %s after setup: %v (registered %v), want %v", name, got, ok, typ)
		}
	}
	key := first[stepAdminKey].Detail
	mongo := testenv.Mongo(t).Client().Database(db)
	if k, err := auth.NewStore(mongo).Lookup(ctx, key); err != nil || k.Permission != auth.PermAdmin {
		t.Fatalf("printed admin key: %+v %v", k, err)
	}

	out, errOut, err = runStarter("setup")
	if err != nil {
		t.Fatalf("second setup: %v\n%s", err, errOut)
	}
	if strings.Contains(out, key) || strings.Contains(errOut, key) {
		t.Fatalf("second run printed the admin key again:\n%s%s", out, errOut)
	}
	if strings.Contains(out, stateCreated) || !strings.Contains(errOut, "nothing changed") {
		t.Fatalf("second run is not a no-op:\nstdout:\n%s\nstderr:\n%s", out, errOut)
	}
	if keys, _, err := auth.NewStore(mongo).List(ctx, auth.ListFilter{}); err != nil || len(keys) != 1 {
		t.Fatalf("keys after two runs: %d %v, want the one admin key", len(keys), err)
	}
}

// A namespace that does not exist: setup stops before touching anything and names the command
// that creates it.
func TestSetupNamesTheCommandForAMissingNamespace(t *testing.T) {
	ns := testenv.Unique("missing-ns-")
	setupEnv(t, ns)
	addr, _ := testenv.Temporal(t)
	_, _, err := runStarter("setup")
	if err == nil {
		t.Fatal("setup succeeded on a missing namespace")
	}
	want := "temporal operator namespace create --namespace " + ns + " --retention 72h --address " + addr
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q\ndoes not name %q", err, want)
	}
}

// The commands a refused registration prints are the temporal CLI's, one per missing attribute,
// with the API key as its variable, never its value.
func TestSearchAttributesRefusedListsTheCommands(t *testing.T) {
	want, _ := searchattr.Types()
	err := searchAttributesRefused(config.Temporal{Address: "cloud.example:7233", Namespace: "taskloom.acct", APIKey: "secret-key"}, want, context.DeadlineExceeded)
	msg := err.Error()
	if strings.Contains(msg, "secret-key") {
		t.Fatalf("the API key is inlined: %s", msg)
	}
	for _, line := range []string{
		`temporal operator search-attribute create --namespace taskloom.acct --name OriginalTaskId --type Int --address cloud.example:7233 --api-key "$TEMPORAL_API_KEY"`,
		`temporal operator search-attribute create --namespace taskloom.acct --name TaskloomKind --type Keyword --address cloud.example:7233 --api-key "$TEMPORAL_API_KEY"`,
	} {
		if !strings.Contains(msg, line) {
			t.Errorf("missing %q in:\n%s", line, msg)
		}
	}
	if n := strings.Count(msg, "temporal operator search-attribute create"); n != len(want) {
		t.Errorf("%d commands, want %d", n, len(want))
	}
}

func decodeSteps(t *testing.T, out string) map[string]SetupStep {
	t.Helper()
	var steps []SetupStep
	if err := json.Unmarshal([]byte(out), &steps); err != nil {
		t.Fatalf("setup -o json: %v\n%s", err, out)
	}
	byStep := map[string]SetupStep{}
	for _, s := range steps {
		byStep[s.Step] = s
	}
	return byStep
}
