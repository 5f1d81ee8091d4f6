package main

import (
	"os"
	"path/filepath"
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
		c := temporalConfig(s, ports, "127.0.0.1:5432", "/d.yaml")
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
	h1 := temporalConfig(temporalServices[1], ports, "127.0.0.1:5432", "/d.yaml")
	h2 := temporalConfig(temporalServices[2], ports, "127.0.0.1:5432", "/d.yaml")
	if h1.Services["history"] == h2.Services["history"] {
		t.Error("both history processes listen on the same ports")
	}
	if h1.Services["frontend"] != h2.Services["frontend"] {
		t.Error("the history processes disagree on the frontend's address")
	}
}

func TestTemporalConfigUsesPostgresForPersistenceAndVisibility(t *testing.T) {
	c := temporalConfig(temporalServices[0], testPorts(t), "127.0.0.1:5999", "/d.yaml")
	p := c.Persistence
	if p.NumHistoryShards < 4 {
		t.Errorf("numHistoryShards %d, want at least 4", p.NumHistoryShards)
	}
	for store, db := range map[string]string{p.DefaultStore: dbTemporal, p.VisibilityStore: dbVisibility} {
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
	if err := writeTemporalConfigs(dir, ports, "127.0.0.1:5432"); err != nil {
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
		want := temporalConfig(s, ports, "127.0.0.1:5432", filepath.Join(dir, temporalConfigDir, dynamicConfigFile))
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
