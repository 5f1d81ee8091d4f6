package feishu

import (
	"fmt"
	"time"
	_ "time/tzdata" // the table time zone (Asia/Shanghai by default) must load on minimal images
)

// DefaultTimeZone is the document time zone Feishu uses for ExactDate filters unless configured.
const DefaultTimeZone = "Asia/Shanghai"

// DayLayout is the YYYY-MM-DD form used for logical dates (the result table's Date, --date).
const DayLayout = "2006-01-02"

// DayStart returns the midnight of day (YYYY-MM-DD) in loc as Unix milliseconds, the value
// Feishu stores for a date cell and expects in ["ExactDate","<ms>"].
func DayStart(day string, loc *time.Location) (int64, error) {
	t, err := time.ParseInLocation(DayLayout, day, loc)
	if err != nil {
		return 0, fmt.Errorf("parse day %q (want YYYY-MM-DD): %w", day, err)
	}
	return t.UnixMilli(), nil
}

// DayOf formats a millisecond timestamp as the YYYY-MM-DD day it falls on in loc.
func DayOf(ms int64, loc *time.Location) string {
	return time.UnixMilli(ms).In(loc).Format(DayLayout)
}

// TruncateDay maps a timestamp to the midnight of its day in loc (Unix ms), the day-granular
// comparison key Feishu applies to ExactDate conditions.
func TruncateDay(ms int64, loc *time.Location) int64 {
	t := time.UnixMilli(ms).In(loc)
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc).UnixMilli()
}
