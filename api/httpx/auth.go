package httpx

import (
	"errors"
	"net/http"

	"github.com/taskloom/taskloom/internal/auth"
)

// FromAuth maps a refusal of internal/auth to the envelope: 401 INVALID_API_KEY or 403
// FORBIDDEN (with the refused project_id when a project-bound key is the reason). Other errors
// pass through.
func FromAuth(err error) error {
	var de *auth.DeniedError
	if !errors.As(err, &de) {
		return err
	}
	if de.Status == http.StatusUnauthorized {
		return Unauthorized(de.Message)
	}
	e := Forbidden(de.Message)
	if de.ProjectID != "" {
		e = e.WithDetail("project_id", de.ProjectID)
	}
	return e
}
