package httpx

import (
	"time"

	"github.com/labstack/echo/v4"
)

// Envelope writes TaskEcho's success body {success:true, data, message, timestamp}.
func Envelope(c echo.Context, status int, data any, message string) error {
	return c.JSON(status, map[string]any{
		"success":   true,
		"data":      data,
		"message":   message,
		"timestamp": Timestamp(),
	})
}

// Timestamp is the envelope's time format (RFC 3339 with milliseconds, UTC).
func Timestamp() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000Z") }
