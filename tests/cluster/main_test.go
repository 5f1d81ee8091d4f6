//go:build cluster

// Package cluster_test runs taskloom end to end against the production shape `make cluster`
// starts (a Temporal cluster on PostgreSQL, two API and two worker processes, the fakes in a
// process of their own), over HTTP as a client would, and breaks it: a history process killed,
// matching restarted, PostgreSQL stopped, Redis restarted. `make test-cluster` starts a fresh
// cluster (own PostgreSQL and Redis, so they may be stopped), runs these and stops it.
package cluster_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/envfile"
	"github.com/taskloom/taskloom/internal/testenv"
)

// cluster is what the tests know of the running cluster: its env file's values.
type cluster struct {
	dir string
	env map[string]string
	// apis are the API instances' base URLs (API, API_2); tests spread their requests over both.
	apis []string
	// adminKey is an admin API key of the cluster.
	adminKey string
}

var cl cluster

// TestMain reads $CLUSTER_DIR/cluster.env (default .data/cluster), which `.bin/cluster up` writes.
func TestMain(m *testing.M) {
	c, err := loadCluster()
	if err != nil {
		fmt.Fprintf(os.Stderr, "tests/cluster: %v\nrun `make cluster` first (or `make test-cluster`, which starts and stops one)\n", err)
		os.Exit(1)
	}
	cl = c
	os.Exit(m.Run())
}

func loadCluster() (cluster, error) {
	dir := os.Getenv("CLUSTER_DIR")
	if dir == "" {
		dir = filepath.Join(".data", "cluster")
	}
	if !filepath.IsAbs(dir) { // relative to the repository, as the launcher takes it, not to this package
		dir = filepath.Join(testenv.RepoRoot(), dir)
	}
	env, err := envfile.Read(filepath.Join(dir, "cluster.env"))
	if err != nil {
		return cluster{}, err
	}
	c := cluster{dir: dir, env: env, adminKey: env["ADMIN_KEY"]}
	for _, k := range []string{"API", "API_2"} {
		if env[k] == "" {
			return cluster{}, fmt.Errorf("cluster.env has no %s", k)
		}
		c.apis = append(c.apis, strings.TrimRight(env[k], "/"))
	}
	if c.adminKey == "" {
		return cluster{}, fmt.Errorf("cluster.env has no ADMIN_KEY")
	}
	return c, nil
}

// need returns the env file's value of key and fails the test when it has none.
func (c cluster) need(t testing.TB, key string) string {
	t.Helper()
	v := c.env[key]
	if v == "" {
		t.Fatalf("cluster.env has no %s", key)
	}
	return v
}

// api returns the base URL of API instance i (mod the number of instances), so a test
// alternating i uses both.
func (c cluster) api(i int) string { return c.apis[i%len(c.apis)] }

// ctl runs `.bin/cluster <args>` on this cluster (a fault: kill, stop, start, restart NAME).
func (c cluster) ctl(t testing.TB, args ...string) {
	t.Helper()
	if err := c.run(t, args...); err != nil {
		t.Fatal(err)
	}
}

// run is ctl for a goroutine of the test: it returns the failure.
func (c cluster) run(t testing.TB, args ...string) error {
	start := time.Now()
	cmd := exec.Command(filepath.Join(testenv.RepoRoot(), ".bin", "cluster"), args...)
	cmd.Dir = testenv.RepoRoot() // the launcher runs from the repository, as make does
	cmd.Env = append(os.Environ(), "CLUSTER_DIR="+c.dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf(".bin/cluster %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf(".bin/cluster %s (%s)", strings.Join(args, " "), time.Since(start).Round(100*time.Millisecond))
	return nil
}
