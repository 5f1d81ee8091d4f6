package ui

import "github.com/taskloom/taskloom/internal/pipeline"

// Refund states of a pipeline task, as the console words them. Only a failed task can be owed a
// refund: eligible_for_refund is the schema's policy (refund on failure), set when the task is
// admitted, so a running or successful task carries it too and is owed nothing.
const (
	refundDone          = "已退款"
	refundOwed          = "待退款" // failed, the schema refunds, not returned yet
	refundNone          = "不退款" // failed, the schema does not refund
	refundNotApplicable = "不适用" // not failed: nothing to refund
)

// refundText is the refund state of a task with this status and these refund fields.
func refundText(status string, eligible, refunded bool) string {
	switch {
	case refunded:
		return refundDone
	case status != pipeline.StatusFailed:
		return refundNotApplicable
	case eligible:
		return refundOwed
	default:
		return refundNone
	}
}
