package httpx

import (
	"fmt"
	"time"
)

// TimeRange reads an optional window of two RFC 3339 fields, as the bulk routes' filters take
// it: each may be empty (nil), and until may not be before since. Errors are validation errors
// naming the field at fault.
func TimeRange(sinceField, since, untilField, until string) (from, to *time.Time, err error) {
	if from, err = parseTime(sinceField, since); err != nil {
		return nil, nil, err
	}
	if to, err = parseTime(untilField, until); err != nil {
		return nil, nil, err
	}
	if from != nil && to != nil && to.Before(*from) {
		return nil, nil, Validation(untilField, fmt.Sprintf("field %q must not be before %s", untilField, sinceField))
	}
	return from, to, nil
}

func parseTime(field, v string) (*time.Time, error) {
	if v == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return nil, Validation(field, fmt.Sprintf("field %q must be an RFC 3339 time such as 2026-01-02T15:04:05Z", field))
	}
	t = t.UTC()
	return &t, nil
}
