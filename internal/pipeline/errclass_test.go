package pipeline

import "testing"

// The error-class table (docs/pipelines.md "Vendor failures"): which HTTP answers fall in which class, the
// error type each class carries, and which classes are retried.
func TestErrorClassTable(t *testing.T) {
	for code, want := range map[int]ErrorClass{
		429: ClassTransient, 408: ClassTransient, 502: ClassTransient, 503: ClassTransient, 504: ClassTransient,
		400: ClassHard, 401: ClassHard, 403: ClassHard, 404: ClassHard, 409: ClassHard, 422: ClassHard,
		500: ClassAmbiguous, 501: ClassAmbiguous, 599: ClassAmbiguous,
	} {
		if got := ClassifyStatus(code); got != want {
			t.Errorf("ClassifyStatus(%d) = %s, want %s", code, got, want)
		}
	}
	for _, tc := range []struct {
		class     ErrorClass
		errType   string
		retryable bool
	}{
		{ClassTransient, ErrTypeVendorTransient, true},
		{ClassHard, ErrTypeVendorRejected, false},
		{ClassJobFailed, ErrTypeVendorJobFailed, false},
		{ClassAmbiguous, ErrTypeVendorAmbiguous, true},
	} {
		if tc.class.ErrType() != tc.errType || tc.class.Retryable() != tc.retryable {
			t.Errorf("%s: type %s retryable %v", tc.class, tc.class.ErrType(), tc.class.Retryable())
		}
		if c, ok := ClassOfErrType(tc.errType); !ok || c != tc.class {
			t.Errorf("ClassOfErrType(%s) = %s, %v", tc.errType, c, ok)
		}
	}
	if _, ok := ClassOfErrType(ErrTypeRender); ok {
		t.Error("a render error has no vendor class")
	}
}
