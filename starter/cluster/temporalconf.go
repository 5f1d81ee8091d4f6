package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

// Where the Temporal server reads its configuration: `--root CLUSTER_DIR --config temporal
// --env NAME` loads CLUSTER_DIR/temporal/NAME.yaml (the server joins --config onto --root, so an
// absolute --config alone is not enough).
const (
	temporalConfigDir = "temporal"
	dynamicConfigFile = "dynamicconfig.yaml"
)

// numHistoryShards is fixed when the database is created: four shards split between the two
// history processes, so killing one moves two shards to the other.
const numHistoryShards = 4

// Databases on the PostgreSQL server: persistence and visibility.
const (
	dbTemporal   = "taskloom_temporal"
	dbVisibility = "taskloom_temporal_visibility"
)

// clusterDynamicConfig is the dynamic configuration of the cluster: the dev server's settings
// (internal/devstack.TemporalDynamicConfig) that change behaviour taskloom relies on. Task queue
// partitions are left at the server's default (4), as on a production cluster, so fairness is
// per partition here.
var clusterDynamicConfig = map[string]any{
	"matching.enableFairness":             true,
	"system.enableActivityEagerExecution": true,
}

// The server configuration, the part of go.temporal.io/server/common/config.Config it sets.
type serverConfig struct {
	Log                 logConfig                `yaml:"log"`
	Persistence         persistenceConfig        `yaml:"persistence"`
	Global              globalConfig             `yaml:"global"`
	Services            map[string]serviceConfig `yaml:"services"`
	ClusterMetadata     clusterMetadata          `yaml:"clusterMetadata"`
	DCRedirectionPolicy map[string]string        `yaml:"dcRedirectionPolicy"`
	DynamicConfigClient dynamicConfigClient      `yaml:"dynamicConfigClient"`
}

type logConfig struct {
	Stdout bool   `yaml:"stdout"`
	Level  string `yaml:"level"`
}

type persistenceConfig struct {
	DefaultStore     string               `yaml:"defaultStore"`
	VisibilityStore  string               `yaml:"visibilityStore"`
	NumHistoryShards int                  `yaml:"numHistoryShards"`
	DataStores       map[string]dataStore `yaml:"datastores"`
}

type dataStore struct {
	SQL sqlStore `yaml:"sql"`
}

type sqlStore struct {
	PluginName      string `yaml:"pluginName"`
	DatabaseName    string `yaml:"databaseName"`
	ConnectAddr     string `yaml:"connectAddr"`
	ConnectProtocol string `yaml:"connectProtocol"`
	User            string `yaml:"user"`
	MaxConns        int    `yaml:"maxConns"`
	MaxIdleConns    int    `yaml:"maxIdleConns"`
	MaxConnLifetime string `yaml:"maxConnLifetime"`
}

type globalConfig struct {
	Membership membershipConfig `yaml:"membership"`
	PProf      struct {
		Port int `yaml:"port"`
	} `yaml:"pprof"`
	Metrics struct {
		Prometheus prometheusConfig `yaml:"prometheus"`
	} `yaml:"metrics"`
}

type membershipConfig struct {
	MaxJoinDuration  string `yaml:"maxJoinDuration"`
	BroadcastAddress string `yaml:"broadcastAddress"`
}

type prometheusConfig struct {
	Framework     string `yaml:"framework"`
	TimerType     string `yaml:"timerType"`
	ListenAddress string `yaml:"listenAddress"`
}

type serviceConfig struct {
	RPC rpcConfig `yaml:"rpc"`
}

type rpcConfig struct {
	GRPCPort        int  `yaml:"grpcPort"`
	MembershipPort  int  `yaml:"membershipPort"`
	HTTPPort        int  `yaml:"httpPort,omitempty"`
	BindOnLocalHost bool `yaml:"bindOnLocalHost"`
}

type clusterMetadata struct {
	EnableGlobalNamespace    bool                          `yaml:"enableGlobalNamespace"`
	FailoverVersionIncrement int                           `yaml:"failoverVersionIncrement"`
	MasterClusterName        string                        `yaml:"masterClusterName"`
	CurrentClusterName       string                        `yaml:"currentClusterName"`
	ClusterInformation       map[string]clusterInformation `yaml:"clusterInformation"`
}

type clusterInformation struct {
	Enabled                bool   `yaml:"enabled"`
	InitialFailoverVersion int    `yaml:"initialFailoverVersion"`
	RPCName                string `yaml:"rpcName"`
	RPCAddress             string `yaml:"rpcAddress"`
}

type dynamicConfigClient struct {
	Filepath     string `yaml:"filepath"`
	PollInterval string `yaml:"pollInterval"`
}

// clusterName is the cluster's name in its metadata.
const clusterName = "taskloom"

// temporalConfig is the configuration of the Temporal process proc (a temporalServices name):
// the same persistence, membership and service addresses for every process, its own metrics
// and pprof ports, and for its own service its own gRPC and membership ports (the two history
// processes differ only there).
func temporalConfig(proc temporalService, ports Ports, pgAddr, dynamicConfigPath string) serverConfig {
	store := func(db string, conns int) dataStore {
		return dataStore{SQL: sqlStore{PluginName: "postgres12", DatabaseName: db, ConnectAddr: pgAddr,
			ConnectProtocol: "tcp", User: "postgres", MaxConns: conns, MaxIdleConns: conns, MaxConnLifetime: "1h"}}
	}
	c := serverConfig{
		Log: logConfig{Stdout: true, Level: "warn"},
		Persistence: persistenceConfig{DefaultStore: "postgres-default", VisibilityStore: "postgres-visibility",
			NumHistoryShards: numHistoryShards, DataStores: map[string]dataStore{
				"postgres-default": store(dbTemporal, 20), "postgres-visibility": store(dbVisibility, 5)}},
		Services: map[string]serviceConfig{},
		ClusterMetadata: clusterMetadata{FailoverVersionIncrement: 10, MasterClusterName: clusterName,
			CurrentClusterName: clusterName, ClusterInformation: map[string]clusterInformation{clusterName: {
				Enabled: true, InitialFailoverVersion: 1, RPCName: "frontend", RPCAddress: ports.addr("temporal-frontend.grpc")}}},
		DCRedirectionPolicy: map[string]string{"policy": "noop"},
		DynamicConfigClient: dynamicConfigClient{Filepath: dynamicConfigPath, PollInterval: "10s"},
	}
	c.Global.Membership = membershipConfig{MaxJoinDuration: "30s", BroadcastAddress: "127.0.0.1"}
	c.Global.PProf.Port = ports[proc.Name+".pprof"]
	c.Global.Metrics.Prometheus = prometheusConfig{Framework: "tally", TimerType: "histogram", ListenAddress: ports.addr(proc.Name + ".metrics")}
	for _, s := range temporalServices {
		if _, done := c.Services[s.Service]; done && s.Name != proc.Name {
			continue // the second history process's ports are in its own file only
		}
		rpc := rpcConfig{GRPCPort: ports[s.Name+".grpc"], MembershipPort: ports[s.Name+".membership"], BindOnLocalHost: true}
		if s.Service == "frontend" {
			rpc.HTTPPort = ports["temporal-frontend.http"]
		}
		c.Services[s.Service] = serviceConfig{RPC: rpc}
	}
	return c
}

// writeTemporalConfigs writes the dynamic config and one server config per Temporal process
// into CLUSTER_DIR/temporal.
func writeTemporalConfigs(dir string, ports Ports, pgAddr string) error {
	cdir := filepath.Join(dir, temporalConfigDir)
	if err := os.MkdirAll(cdir, 0o755); err != nil {
		return err
	}
	dyn := map[string][]map[string]any{}
	for k, v := range clusterDynamicConfig {
		dyn[k] = []map[string]any{{"value": v}}
	}
	dynPath := filepath.Join(cdir, dynamicConfigFile)
	if err := writeYAML(dynPath, dyn); err != nil {
		return err
	}
	for _, s := range temporalServices {
		if err := writeYAML(filepath.Join(cdir, s.Name+".yaml"), temporalConfig(s, ports, pgAddr, dynPath)); err != nil {
			return err
		}
	}
	return nil
}

// uiConfig is the Temporal UI server's configuration: the frontend, its port, and the codec
// server as the UI's codec endpoint.
func uiConfig(ports Ports) map[string]any {
	return map[string]any{
		"temporalGrpcAddress": ports.addr("temporal-frontend.grpc"),
		"host":                "127.0.0.1",
		"port":                ports["temporal-ui"],
		"enableUi":            true,
		"defaultNamespace":    "default",
		"cors":                map[string]any{"cookieInsecure": true},
		"codec":               map[string]any{"endpoint": ports.url("codec-server")},
	}
}

// uiConfigDir holds the UI server's config.yaml (`--root CLUSTER_DIR --config ui --env cluster`).
const (
	uiConfigDir = "ui"
	uiEnv       = "cluster"
)

func writeUIConfig(dir string, ports Ports) error {
	cdir := filepath.Join(dir, uiConfigDir)
	if err := os.MkdirAll(cdir, 0o755); err != nil {
		return err
	}
	return writeYAML(filepath.Join(cdir, uiEnv+".yaml"), uiConfig(ports))
}

func writeYAML(path string, v any) error {
	var b strings.Builder
	b.WriteString("# written by .bin/cluster up; rewritten at every up\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
