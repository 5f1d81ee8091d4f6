package pipeline

// ErrorClass is what a vendor failure means, and so what it does to the step, to the candidate
// list and to the provider's health (docs/pipelines.md "Vendor failures" has the table).
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
	// The job is over, so the next candidate may run the step.
	ClassJobFailed ErrorClass = "job_failed"
	// ClassAmbiguous: 500 (and an unreadable 2xx). The call may or may not have taken effect:
	// retried within retry.max_attempts, then the next candidate.
	ClassAmbiguous ErrorClass = "ambiguous"
)

// Activity error types of vendor failures by class (ErrTypeVendorRejected is the hard class).
const (
	ErrTypeVendorTransient = "PipelineVendorTransient"
	ErrTypeVendorAmbiguous = "PipelineVendorAmbiguous"
	// ErrTypeVendorJobFailed is raised by the workflow, not by an activity: a submitted job
	// reported a failed status.
	ErrTypeVendorJobFailed = "PipelineVendorJobFailed"
)

// ClassifyStatus is the class of a non-2xx HTTP answer. (Status numbers, not net/http's
// constants: workflows import this package, and tests/arch keeps net/http out of their reach.)
func ClassifyStatus(code int) ErrorClass {
	switch code {
	case 429, 408, 502, 503, 504: // Too Many Requests, Request Timeout, Bad Gateway, Service Unavailable, Gateway Timeout
		return ClassTransient
	}
	if code >= 400 && code < 500 {
		return ClassHard
	}
	return ClassAmbiguous
}

// ErrType is the error type a failure of class c carries.
func (c ErrorClass) ErrType() string {
	switch c {
	case ClassTransient:
		return ErrTypeVendorTransient
	case ClassHard:
		return ErrTypeVendorRejected
	case ClassJobFailed:
		return ErrTypeVendorJobFailed
	}
	return ErrTypeVendorAmbiguous
}

// Retryable reports whether the same call may be made again: transient and ambiguous failures
// are retried (within retry.max_attempts, or until the step's deadline for a status poll).
func (c ErrorClass) Retryable() bool { return c == ClassTransient || c == ClassAmbiguous }

// ClassOfErrType is the class of an error type; ok is false for a type that is no vendor failure
// (a render or configuration error, a timeout).
func ClassOfErrType(errType string) (c ErrorClass, ok bool) {
	for _, c := range []ErrorClass{ClassTransient, ClassHard, ClassJobFailed, ClassAmbiguous} {
		if c.ErrType() == errType {
			return c, true
		}
	}
	return "", false
}
