package config

import (
	"strings"
	"testing"
)

func TestLoadRejectsBadValuesNamingTheVariable(t *testing.T) {
	cases := map[string]string{
		"API_ADDR":               "notaport",
		"MONGO_URI":              "xx://",
		"REDIS_URL":              "http://localhost:6379",
		"TEMPORAL_ADDRESS":       "localhost",
		"KAFKA_BROKERS":          "a:b:c",
		"LOG_LEVEL":              "loud",
		"TASKLOOM_ENV":           "staging",
		"API_BODY_LIMIT":         "lots",
		"API_SHUTDOWN_TIMEOUT":   "soon",
		"API_READ_TIMEOUT":       "0s",
		"API_WRITE_TIMEOUT":      "60s", // shorter than ENTRY_WAIT_TIMEOUT_MAX
		"TRUSTED_PROXIES":        "10.0.0.1,not-an-ip",
		"DEV_LOG_LEVEL":          "chatty",
		"TEMPORAL_PORT":          "70000",
		"TEMPORAL_UI_PORT":       "0",
		"PIPELINE_ALLOWED_HOSTS": "10.0.0.0/33",

		"TEMPORAL_CODEC_KEYS":       "k1:c2hvcnQ=",
		"CODEC_SERVER_ADDR":         "8089",
		"CODEC_SERVER_CORS_ORIGINS": "https://ui.example.com/path",

		"WEBHOOK_RECORDS_SQLITE_TABLE": "records; DROP TABLE x",
		"FEISHU_REQUEST_TIMEOUT":       "0s",
	}
	for name, value := range cases {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, value)
			_, err := Load()
			if err == nil {
				t.Fatalf("%s=%q accepted", name, value)
			}
			if !strings.Contains(err.Error(), name) {
				t.Fatalf("error does not name %s: %v", name, err)
			}
		})
	}
}

func TestProdRequiresStores(t *testing.T) {
	t.Setenv("TASKLOOM_ENV", "prod")
	_, err := Load()
	if err == nil || !strings.Contains(err.Error(), "MONGO_URI") || !strings.Contains(err.Error(), "REDIS_URL") {
		t.Fatalf("prod without stores: %v", err)
	}
}

func TestDefaultsValidate(t *testing.T) {
	if err := Defaults().Validate(); err != nil {
		t.Fatalf("defaults do not validate: %v", err)
	}
}

// PIPELINE_ALLOWED_HOSTS reaches the outbound policy, which allows loopback only in dev.
func TestEgressPolicyFollowsEnvAndAllowList(t *testing.T) {
	t.Setenv("PIPELINE_ALLOWED_HOSTS", "vendor.corp.example, 10.20.0.0/16")
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Egress().CheckURL("http://10.20.1.1/"); err != nil {
		t.Fatalf("allow-listed range refused: %v", err)
	}
	if err := c.Egress().CheckURL("http://127.0.0.1:9000/"); err != nil {
		t.Fatalf("dev refused loopback: %v", err)
	}
	c.Env = "prod"
	if err := c.Egress().CheckURL("http://127.0.0.1:9000/"); err == nil {
		t.Fatal("prod accepted loopback")
	}
}

func TestTrustedProxiesTakeAddressesAndNetworks(t *testing.T) {
	t.Setenv("TRUSTED_PROXIES", "10.0.0.7, 192.168.0.0/16,fd00::/8,::1")
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	nets, err := c.API.TrustedProxyNets()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range nets {
		got = append(got, n.String())
	}
	if want := "10.0.0.7/32 192.168.0.0/16 fd00::/8 ::1/128"; strings.Join(got, " ") != want {
		t.Errorf("parsed %v, want %s", got, want)
	}
}

// A malformed key ring fails at start naming the variable, never printing a key.
func TestCodecKeysErrorsDoNotPrintKeys(t *testing.T) {
	const key = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=" // 32 bytes of zeros
	t.Setenv("TEMPORAL_CODEC_KEYS", "k2:"+key+",k2:"+key)
	_, err := Load()
	if err == nil || !strings.Contains(err.Error(), "TEMPORAL_CODEC_KEYS") || strings.Contains(err.Error(), key) {
		t.Fatalf("duplicate key id: %v", err)
	}
	t.Setenv("TEMPORAL_CODEC_KEYS", "k2:"+key)
	if _, err := Load(); err != nil {
		t.Fatalf("a valid ring: %v", err)
	}
}

func TestCodecCORSOriginsDefaultToTheWebUI(t *testing.T) {
	c := Defaults()
	c.Temporal.UIURL = "https://temporal.example.com/ui/"
	if got := c.CodecCORSOrigins(); len(got) != 1 || got[0] != "https://temporal.example.com" {
		t.Fatalf("default origins = %v", got)
	}
	c.CodecServer.CORSOrigins = []string{"https://a.example.com", "https://b.example.com"}
	if got := c.CodecCORSOrigins(); len(got) != 2 {
		t.Fatalf("configured origins = %v", got)
	}
}
