package pipeline

// ErrorClass is what a vendor failure means, and so what it does to the step, to the candidate
// list and to the provider's health (README "Vendor failures" has the table).
type ErrorClass string

const (
	// ClassTransient: 429, 408, 502, 503, 504, connection refused/reset, timeouts. The vendor is
	// busy or briefly away: retry the same call (honouring Retry-After), keep polling a submitted
	// job, and count it against the provider's circuit breaker.
	ClassTransient ErrorClass = "transient"
	// ClassHard: any other 4xx. The request is wrong; retrying the same provider cannot help,
	// another candidate may accept it.
	ClassHard ErrorClass = "hard"
	// ClassJobFailed: the vendor reported one of the step's failed_statuses for a submitted job.
	ClassJobFailed ErrorClass = "job_failed"
	// ClassAmbiguous: 500 (and an unreadable 2xx). The call may or may not have taken effect:
	// retried within retry.max_attempts, then the next candidate.
	ClassAmbiguous ErrorClass = "ambiguous"
)

// Activity error types of vendor failures by class (ErrTypeVendorRejected is the hard class).
const (
	ErrTypeVendorTransient = "PipelineVendorTransient"
	ErrTypeVendorAmbiguous = "PipelineVendorAmbiguous"
)

// ClassifyStatus is the class of a non-2xx HTTP answer.
func ClassifyStatus(code int) ErrorClass {
	switch {
	// 429, 408, 502, 503, 504 as numbers: the workflows link this package and must not reach
	// net/http (tests/arch).
	case code == 429, code == 408, code == 502, code == 503, code == 504:
		return ClassTransient
	case code >= 400 && code < 500:
		return ClassHard
	}
	return ClassAmbiguous
}
