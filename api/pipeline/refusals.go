package pipeline

import (
	"cmp"
	"errors"

	"github.com/taskloom/taskloom/api/httpx"
	"github.com/taskloom/taskloom/internal/pipeline"
)

// refusalAnswer is the API's answer to a refusal of pipeline.Refusals (err wraps a kind's
// sentinel): the kind's status and code; its message, or else the refusal's own; the kind's error
// type as details.reason; and the input_data field an invalid input names. ok is false for any
// other error.
func refusalAnswer(err error) (*httpx.Error, bool) {
	k, ok := pipeline.RefusalKindOf(err)
	if !ok {
		return nil, false
	}
	e := httpx.New(k.HTTPStatus, k.Code, cmp.Or(k.Message, err.Error())).WithDetail("reason", k.Type)
	var re *pipeline.RefusalError
	if errors.As(err, &re) && re.Field != "" {
		e = e.WithDetail("field", re.Field)
	}
	return e, true
}
