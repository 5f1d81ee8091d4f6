package ui

import (
	"testing"

	"github.com/taskloom/taskloom/internal/pipeline"
)

// eligible_for_refund is the schema's policy, set on every task of a refunding pipeline: only a
// failed task is owed anything, so a successful or running one reads "not applicable".
func TestRefundTextNamesTheTasksRefundState(t *testing.T) {
	for _, c := range []struct {
		status             string
		eligible, refunded bool
		want               string
	}{
		{pipeline.StatusSuccess, true, false, refundNotApplicable},
		{pipeline.StatusSuccess, false, false, refundNotApplicable},
		{pipeline.StatusProcessing, true, false, refundNotApplicable},
		{pipeline.StatusPending, true, false, refundNotApplicable},
		{pipeline.StatusFailed, true, false, refundOwed},
		{pipeline.StatusFailed, true, true, refundDone},
		{pipeline.StatusFailed, false, false, refundNone},
	} {
		if got := refundText(c.status, c.eligible, c.refunded); got != c.want {
			t.Errorf("refundText(%s, eligible %v, refunded %v) = %s, want %s", c.status, c.eligible, c.refunded, got, c.want)
		}
	}
}
