package pipeline

import (
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	"github.com/taskloom/taskloom/internal/pipeline/pipelineprom"
	"github.com/taskloom/taskloom/internal/pipeline/vendorhttp"
	"github.com/taskloom/taskloom/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// newActivities wires the activities as the worker does, over store and the real vendor client.
func newActivities(store *pipelinedb.Store, backendURL string) *Activities {
	metrics := pipelineprom.New(prometheus.NewRegistry())
	return &Activities{Store: store, BackendURL: backendURL, Metrics: metrics,
		Vendors: &vendorhttp.Client{HTTP: &http.Client{Timeout: 10 * time.Second}, Calls: store, Metrics: metrics}}
}

// storeOf is the store under a, for what a test sets up or checks beyond the activities' needs.
func storeOf(a *Activities) *pipelinedb.Store { return a.Store.(*pipelinedb.Store) }
