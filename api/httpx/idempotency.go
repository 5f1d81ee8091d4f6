package httpx

import (
	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/internal/pipeline"
)

// HeaderIdempotencyKey makes a creating request safe to retry: the same key (scoped to the
// caller's API key) finds what the first request created.
const HeaderIdempotencyKey = "Idempotency-Key"

// IdempotencyKey is the request's Idempotency-Key header: "" when it sends none, else the key, or
// a 400 VALIDATION_ERROR naming the header when it is not a valid key (pipeline.CheckIdempotencyKey).
func IdempotencyKey(c echo.Context) (string, error) {
	key := c.Request().Header.Get(HeaderIdempotencyKey)
	if key == "" {
		return "", nil
	}
	if err := pipeline.CheckIdempotencyKey(key); err != nil {
		return "", Validation(HeaderIdempotencyKey, err.Error())
	}
	return key, nil
}
