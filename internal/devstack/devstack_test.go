package devstack_test

import (
	"context"
	"testing"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/devstack"
	"github.com/taskloom/taskloom/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// A dependency whose URL is set is used as given; only unset ones are embedded.
func TestStartSkipsConfiguredDependencies(t *testing.T) {
	cfg := config.Defaults()
	cfg.Mongo.URI = testenv.MongoURI(t)
	cfg.Redis.URL = testenv.RedisURL(t) // the machine's real Redis when it answers
	s, err := devstack.Start(context.Background(), cfg, devstack.Options{DataDir: t.TempDir(), RedisAddr: "127.0.0.1:0", KafkaPort: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, ok := s.Started["redis (miniredis)"]; ok {
		t.Errorf("miniredis started although REDIS_URL was set")
	}
	if _, ok := s.Started["mongo (FerretDB)"]; ok {
		t.Errorf("FerretDB started although MONGO_URI was set")
	}
	if cfg.Redis.URL != testenv.RedisURL(t) || cfg.Mongo.URI != testenv.MongoURI(t) {
		t.Errorf("configured URLs were replaced: redis=%s mongo=%s", cfg.Redis.URL, cfg.Mongo.URI)
	}
	if len(cfg.Kafka.Brokers) != 1 || s.Started["kafka (kfake)"] == "" {
		t.Errorf("kfake not started for unset KAFKA_BROKERS: %v", cfg.Kafka.Brokers)
	}
}

func TestStartEmbedsUnsetRedis(t *testing.T) {
	cfg := config.Defaults()
	cfg.Mongo.URI = testenv.MongoURI(t)
	cfg.Kafka.Brokers = testenv.Kafka(t)
	s, err := devstack.Start(context.Background(), cfg, devstack.Options{DataDir: t.TempDir(), RedisAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Started["redis (miniredis)"] == "" || cfg.Redis.URL == "" {
		t.Fatalf("miniredis not started: %v", s.Started)
	}
	if _, ok := s.Started["kafka (kfake)"]; ok {
		t.Errorf("kfake started although KAFKA_BROKERS was set")
	}
}
