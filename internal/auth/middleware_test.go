package auth

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"
)

// A global route needs the level and no project binding: a bound admin key is refused like a
// key without the level, an unbound one passes.
func TestRequireGlobalRefusesProjectBoundKeys(t *testing.T) {
	e := echo.New()
	for _, tc := range []struct {
		name string
		id   *Identity
		want int // 0: the handler ran
	}{
		{"unbound admin", &Identity{Permission: PermAdmin}, 0},
		{"bound admin", &Identity{Permission: PermAdmin, ProjectID: "A"}, http.StatusForbidden},
		{"unbound write", &Identity{Permission: PermWrite}, http.StatusForbidden},
		{"no key", nil, http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := e.NewContext(httptest.NewRequest(http.MethodPut, "/api/v1/providers/x", nil), httptest.NewRecorder())
			if tc.id != nil {
				Set(c, tc.id)
			}
			ran := false
			err := RequireGlobal(PermAdmin)(func(echo.Context) error { ran = true; return nil })(c)
			var de *DeniedError
			switch {
			case tc.want == 0 && (err != nil || !ran):
				t.Fatalf("refused: %v", err)
			case tc.want != 0 && (ran || !errors.As(err, &de) || de.Status != tc.want):
				t.Fatalf("ran=%v err=%v, want status %d", ran, err, tc.want)
			}
		})
	}
}
