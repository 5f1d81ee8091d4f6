// Package promread reads a process's Prometheus text endpoint: what the bench and the tests read
// of the app's own counters and of the Temporal dev server's.
package promread

import (
	"context"
	"fmt"
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Scrape fetches url and parses its metric families, by name.
func Scrape(ctx context.Context, url string) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scrape %s: %s", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", url, err)
	}
	return fams, nil
}

// Sum adds up the counter series of f that carry every label of match (all of them when match
// is empty); 0 when f is nil.
func Sum(f *dto.MetricFamily, match map[string]string) float64 {
	var n float64
	for _, m := range f.GetMetric() {
		if hasLabels(m, match) {
			n += m.GetCounter().GetValue()
		}
	}
	return n
}

// Label is the value of m's label name ("" when it has none).
func Label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func hasLabels(m *dto.Metric, match map[string]string) bool {
	for name, v := range match {
		if Label(m, name) != v {
			return false
		}
	}
	return true
}
