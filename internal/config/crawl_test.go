package config

import (
	"strings"
	"testing"

	"github.com/caarlos0/env/v11"
)

func TestCrawlDefaultsKeepSeedTopics(t *testing.T) {
	var c Crawl
	if err := env.ParseWithOptions(&c, env.Options{Environment: map[string]string{}}); err != nil {
		t.Fatal(err)
	}
	if c.ControlTopic != "task_control_topic" || c.DataTopic != "x_com_scraped_data" {
		t.Fatalf("topics = %q, %q", c.ControlTopic, c.DataTopic)
	}
	if err := c.validate(); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
}

func TestCrawlValidateNamesVariable(t *testing.T) {
	cases := map[string]string{
		"CRAWL_DEAD_LETTER_TOPIC":   "CRAWL_DEAD_LETTER_TOPIC=x_com_scraped_data",
		"CRAWL_SCHEDULER_TOPIC":     "CRAWL_SCHEDULER_TOPIC=bad topic",
		"CRAWL_CRAWLER_COMMAND":     "CRAWL_CRAWLER_COMMAND=crawler --all",
		"CRAWL_COMPLETION_DEADLINE": "CRAWL_COMPLETION_DEADLINE=0s",
		"CRAWL_BATCH_SIZE":          "CRAWL_BATCH_SIZE=0",
	}
	for want, kv := range cases {
		k, v, _ := strings.Cut(kv, "=")
		var c Crawl
		if err := env.ParseWithOptions(&c, env.Options{Environment: map[string]string{k: v}}); err != nil {
			t.Fatal(err)
		}
		if err := c.validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want it to name %s", kv, err, want)
		}
	}
}
