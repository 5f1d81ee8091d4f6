package pipeline

import "time"

// ProbeResult is the outcome of one GET of a provider's health_url.
type ProbeResult struct {
	// OK: the health URL answered 2xx in time.
	OK bool
	// StatusCode is the HTTP status, 0 when no answer came (connection refused, timeout).
	StatusCode int
	// RetryAfter is the vendor's Retry-After on a 429 or 503 answer (capped by
	// PIPELINE_RETRY_AFTER_MAX), zero otherwise: how long the vendor asked to be left alone, for
	// the health side to hold the provider off that long.
	RetryAfter time.Duration
}
