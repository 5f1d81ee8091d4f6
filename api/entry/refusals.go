package entry

import (
	"cmp"
	"errors"
	"fmt"

	"github.com/taskloom/taskloom/api/httpx"
	"github.com/taskloom/taskloom/internal/entry"
)

// refusalAnswer is the API's answer to a refusal of entry.Refusals (err wraps a kind's sentinel,
// of a kind a request is answered with): the kind's status and code; its message, or else the
// refusal's own; the field it names (a *FieldError names its own, in its message too); and the
// refusal's own message as details.reason when the kind says so. ok is false for any other error.
func refusalAnswer(err error) (*httpx.Error, bool) {
	k, ok := entry.RefusalKindOf(err)
	if !ok || k.HTTPStatus == 0 {
		return nil, false
	}
	msg, field := cmp.Or(k.Message, err.Error()), k.Field
	var fe *entry.FieldError
	if errors.As(err, &fe) {
		msg, field = fmt.Sprintf("field %q %s", fe.Field, fe.Message), fe.Field
	}
	e := httpx.New(k.HTTPStatus, k.Code, msg)
	if field != "" {
		e = e.WithDetail("field", field)
	}
	if k.Reason {
		e = e.WithDetail("reason", err.Error())
	}
	return e, true
}
