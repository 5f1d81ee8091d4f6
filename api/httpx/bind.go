package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-playground/validator/v10"
	"github.com/labstack/echo/v4"
)

// Bind decodes the JSON request body into v. A body that is not JSON, not UTF-8, breaks the
// shape limits (CheckJSON: depth, sizes, repeated keys), or gives a field the wrong type is a
// VALIDATION_ERROR naming the field; unknown fields are ignored so existing clients that send
// extra data keep working.
func Bind(c echo.Context, v any) error {
	body, err := readAll(c)
	if err != nil {
		return err
	}
	return Decode(body, v)
}

// BindOptional is Bind for a request whose body may be left out: an empty body leaves v as it
// is.
func BindOptional(c echo.Context, v any) error {
	body, err := readAll(c)
	if err != nil || isBlank(body) {
		return err
	}
	return Decode(body, v)
}

// ReadBody reads the request body for a handler that parses it itself, after checking it
// against the same limits as Bind (CheckJSON). An empty body is returned as is, for the
// handler to refuse or accept.
func ReadBody(c echo.Context) ([]byte, error) {
	body, err := readAll(c)
	if err != nil || isBlank(body) {
		return body, err
	}
	if err := checkBody(body); err != nil {
		return nil, err
	}
	return body, nil
}

// Decode is Bind for a body already read.
func Decode(body []byte, v any) error {
	if isBlank(body) {
		return Validation("body", "request body is empty; send a JSON object")
	}
	if err := checkBody(body); err != nil {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return decodeError(err)
	}
	return nil
}

func checkBody(body []byte) error {
	if !utf8.Valid(body) {
		return Validation("body", "request body is not valid UTF-8")
	}
	return CheckJSON(body)
}

func isBlank(body []byte) bool { return len(bytes.TrimSpace(body)) == 0 }

// readAll reads the body within the server's body limit (BodyLimit middleware): over it is a 413.
func readAll(c echo.Context) ([]byte, error) {
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return nil, bodyReadError(err)
	}
	return body, nil
}

func bodyReadError(err error) error {
	var he *echo.HTTPError
	if errors.As(err, &he) && he.Code == 413 {
		return New(413, "PAYLOAD_TOO_LARGE", "request body is larger than the limit")
	}
	if strings.Contains(err.Error(), "too large") {
		return New(413, "PAYLOAD_TOO_LARGE", "request body is larger than the limit")
	}
	return Validation("body", "could not read request body: "+err.Error())
}

func decodeError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "body"
		}
		return Validation(field, fmt.Sprintf("field %q must be %s, got %s", field, jsonKind(te.Type), te.Value))
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return Validation("body", fmt.Sprintf("request body is not valid JSON (at byte %d)", se.Offset))
	}
	return Validation("body", "request body is not valid JSON: "+err.Error())
}

func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}

var (
	validateOnce sync.Once
	validate     *validator.Validate
)

func validatorInstance() *validator.Validate {
	validateOnce.Do(func() {
		validate = validator.New(validator.WithRequiredStructEnabled())
		validate.RegisterTagNameFunc(func(f reflect.StructField) string {
			name := strings.SplitN(f.Tag.Get("json"), ",", 2)[0]
			if name == "-" {
				return ""
			}
			return name
		})
	})
	return validate
}

// Validate runs the `validate` struct tags of v and reports the first failure as a
// VALIDATION_ERROR naming the JSON field path.
func Validate(v any) error {
	err := validatorInstance().Struct(v)
	if err == nil {
		return nil
	}
	var ves validator.ValidationErrors
	if !errors.As(err, &ves) || len(ves) == 0 {
		return Validation("body", err.Error())
	}
	fe := ves[0]
	field := fe.Namespace()
	if i := strings.Index(field, "."); i >= 0 {
		field = field[i+1:] // drop the struct type name
	}
	return Validation(field, describe(field, fe))
}

func describe(field string, fe validator.FieldError) string {
	switch fe.Tag() {
	case "required":
		return fmt.Sprintf("field %q is required", field)
	case "oneof":
		return fmt.Sprintf("field %q must be one of [%s]", field, fe.Param())
	case "min", "gte":
		return fmt.Sprintf("field %q must be at least %s", field, fe.Param())
	case "max", "lte":
		return fmt.Sprintf("field %q must be at most %s", field, fe.Param())
	case "url", "http_url":
		return fmt.Sprintf("field %q must be an absolute URL", field)
	}
	return fmt.Sprintf("field %q failed the %q rule", field, fe.Tag())
}
