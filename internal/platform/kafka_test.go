package platform

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/taskloom/taskloom/internal/config"
)

// Every produce of taskloom's waits for its acknowledgements, so the shared client must send at
// once rather than linger (franz-go's default is 10 ms).
func TestKafkaClientDoesNotLinger(t *testing.T) {
	p := &Platform{checks: map[string]Check{}}
	// The client connects lazily: an address nothing listens on is enough to read its options.
	if err := p.openKafka(config.Kafka{Brokers: []string{"127.0.0.1:1"}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kafka.Close)
	if got := p.Kafka.OptValue(kgo.ProducerLinger); got != time.Duration(0) {
		t.Fatalf("producer linger = %v, want 0", got)
	}
}
