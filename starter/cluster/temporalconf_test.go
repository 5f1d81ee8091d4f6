package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func testPorts(t *testing.T) Ports {
	t.Helper()
	n := 20000
	ports, err := allocate(Ports{}, portNames(), func(string) (int, error) { n++; return n, nil })
	if err != nil {
		t.Fatal(err)
	}
	return ports
}

// TestEachTemporalProcessHasItsOwnPorts: processes on one host cannot share a gRPC, membership,
// metrics or pprof port; the two history processes differ only in theirs.
func TestEachTemporalProcessHasItsOwnPorts(t *testing.T) {
	ports := testPorts(t)
	used := map[int]string{}
	for _, s := range temporalServices {
		c := temporalConfig(s, ports, "127.0.0.1:5432", databasesFor("/x/cluster"), "/d.yaml")
		own := c.Services[s.Service].RPC
		for kind, p := range map[string]int{"grpc": own.GRPCPort, "membership": own.MembershipPort,
			"pprof": c.Global.PProf.Port, "metrics": ports[s.Name+".metrics"]} {
			if p == 0 {
				t.Errorf("%s: no %s port", s.Name, kind)
			}
			if other, dup := used[p]; dup {
				t.Errorf("%s %s port %d is also %s", s.Name, kind, p, other)
			}
			used[p] = s.Name + " " + kind
		}
		if c.Global.Metrics.Prometheus.ListenAddress != ports.addr(s.Name+".metrics") {
			t.Errorf("%s: metrics on %s", s.Name, c.Global.Metrics.Prometheus.ListenAddress)
		}
	}
	h1 := temporalConfig(temporalServices[1], ports, "127.0.0.1:5432", databasesFor("/x/cluster"), "/d.yaml")
	h2 := temporalConfig(temporalServices[2], ports, "127.0.0.1:5432", databasesFor("/x/cluster"), "/d.yaml")
	if h1.Services["history"] == h2.Services["history"] {
		t.Error("both history processes listen on the same ports")
	}
	if h1.Services["frontend"] != h2.Services["frontend"] {
		t.Error("the history processes disagree on the frontend's address")
	}
}

func TestTemporalConfigUsesPostgresForPersistenceAndVisibility(t *testing.T) {
	c := temporalConfig(temporalServices[0], testPorts(t), "127.0.0.1:5999", databasesFor("/x/cluster"), "/d.yaml")
	p := c.Persistence
	if p.NumHistoryShards < 4 {
		t.Errorf("numHistoryShards %d, want at least 4", p.NumHistoryShards)
	}
	for store, db := range map[string]string{p.DefaultStore: "taskloom_temporal", p.VisibilityStore: "taskloom_temporal_visibility"} {
		sql := p.DataStores[store].SQL
		if sql.PluginName != "postgres12" || sql.ConnectAddr != "127.0.0.1:5999" || sql.DatabaseName != db {
			t.Errorf("store %s: %+v", store, sql)
		}
	}
	if c.Services["frontend"].RPC.HTTPPort == 0 {
		t.Error("the frontend has no HTTP port")
	}
}

// TestWrittenConfigsParse: the files up writes are YAML that reads back to what was generated,
// one per Temporal process, next to the dynamic config they name.
func TestWrittenConfigsParse(t *testing.T) {
	dir, ports := t.TempDir(), testPorts(t)
	if err := writeTemporalConfigs(dir, ports, "127.0.0.1:5432", databasesFor(dir)); err != nil {
		t.Fatal(err)
	}
	for _, s := range temporalServices {
		b, err := os.ReadFile(filepath.Join(dir, temporalConfigDir, s.Name+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var got serverConfig
		if err := yaml.Unmarshal(b, &got); err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		want := temporalConfig(s, ports, "127.0.0.1:5432", databasesFor(dir), filepath.Join(dir, temporalConfigDir, dynamicConfigFile))
		if got.Services[s.Service] != want.Services[s.Service] || got.DynamicConfigClient != want.DynamicConfigClient {
			t.Errorf("%s: read back %+v, wrote %+v", s.Name, got.Services, want.Services)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, temporalConfigDir, dynamicConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	var dyn map[string][]struct{ Value any }
	if err := yaml.Unmarshal(b, &dyn); err != nil {
		t.Fatal(err)
	}
	if v := dyn["matching.enableFairness"]; len(v) != 1 || v[0].Value != true {
		t.Errorf("matching.enableFairness = %+v", v)
	}
}

// TestEachClusterDirHasItsOwnDatabases: the default cluster keeps the documented names, another
// CLUSTER_DIR gets its own, valid as unquoted PostgreSQL identifiers.
func TestEachClusterDirHasItsOwnDatabases(t *testing.T) {
	if got := databasesFor("/repo/.data/cluster"); got != (databases{"taskloom_temporal", "taskloom_temporal_visibility"}) {
		t.Errorf("default: %+v", got)
	}
	got := databasesFor("/repo/.data/Cluster-Test.2")
	if got.Temporal != "taskloom_temporal_cluster_test_2" || got.Visibility != "taskloom_temporal_visibility_cluster_test_2" {
		t.Errorf("other dir: %+v", got)
	}
}

// TestNewStateRefusesAnEarlierClustersDatabase: a CLUSTER_DIR without its secrets (deleted by
// `make clean`, say) must not start on databases an earlier cluster left on the machine's
// PostgreSQL: their payloads are encrypted with a key that is gone.
func TestNewStateRefusesAnEarlierClustersDatabase(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the machine's PostgreSQL")
	}
	c := testCluster(t, options{})
	c.newState = true
	ctx := context.Background()
	if err := c.postgresReady(ctx); err != nil {
		t.Skipf("no PostgreSQL at %s: %v", c.pgAddr(), err)
	}
	db := fmt.Sprintf("taskloom_guard_test_%d", os.Getpid())
	if _, err := c.psql(ctx, "postgres", "create database "+db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.psql(context.Background(), "postgres", "drop database if exists "+db) })
	err := c.ensureSchema(ctx, db, "temporal")
	if err == nil || !strings.Contains(err.Error(), "make cluster-reset") {
		t.Fatalf("ensureSchema on an earlier cluster's database = %v, want a refusal naming make cluster-reset", err)
	}
}
