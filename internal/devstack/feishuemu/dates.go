package feishuemu

import (
	"strconv"
	"time"
)

// dateCond compares by day in the document time zone: ExactDate is "converted to the zero
// point of the day", so a cell matches `is` when it falls anywhere on that day.
func dateCond(f *field, op string, vals []string, loc *time.Location, now time.Time) (predicate, *apiErr) {
	from, to, aerr := dateRange(vals, loc, now)
	if aerr != nil {
		return nil, aerr
	}
	ranged := to.Sub(from) > 24*time.Hour+time.Hour // a week or a month: `is` only
	if ranged && op != "is" {
		return nil, invalidFilter("%s on date %q takes ExactDate, Today, Tomorrow or Yesterday", op, f.name)
	}
	lo, hi := from.UnixMilli(), to.UnixMilli()
	return func(r *record) bool {
		ms, ok := r.value(f).(float64)
		if !ok {
			return false
		}
		m := int64(ms)
		switch op {
		case "is":
			return m >= lo && m < hi
		case "isGreater":
			return m >= hi
		default: // isLess
			return m < lo
		}
	}, nil
}

// dateRange maps a date value to the [from, to) interval of days it names.
func dateRange(vals []string, loc *time.Location, now time.Time) (time.Time, time.Time, *apiErr) {
	n := now.In(loc)
	today := time.Date(n.Year(), n.Month(), n.Day(), 0, 0, 0, 0, loc)
	day := func(d time.Time) (time.Time, time.Time, *apiErr) { return d, d.AddDate(0, 0, 1), nil }
	if vals[0] == "ExactDate" {
		if len(vals) != 2 {
			return time.Time{}, time.Time{}, invalidFilter("ExactDate takes one timestamp")
		}
		ms, err := strconv.ParseInt(vals[1], 10, 64)
		if err != nil {
			return time.Time{}, time.Time{}, invalidFilter("ExactDate value %q is not a millisecond timestamp", vals[1])
		}
		t := time.UnixMilli(ms).In(loc)
		return day(time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc))
	}
	if len(vals) != 1 {
		return time.Time{}, time.Time{}, invalidFilter("date value %q takes no extra elements", vals[0])
	}
	weekStart := today.AddDate(0, 0, -((int(today.Weekday()) + 6) % 7)) // Monday
	monthStart := time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, loc)
	switch vals[0] {
	case "Today":
		return day(today)
	case "Tomorrow":
		return day(today.AddDate(0, 0, 1))
	case "Yesterday":
		return day(today.AddDate(0, 0, -1))
	case "CurrentWeek":
		return weekStart, weekStart.AddDate(0, 0, 7), nil
	case "LastWeek":
		return weekStart.AddDate(0, 0, -7), weekStart, nil
	case "CurrentMonth":
		return monthStart, monthStart.AddDate(0, 1, 0), nil
	case "LastMonth":
		return monthStart.AddDate(0, -1, 0), monthStart, nil
	case "TheLastWeek":
		return today.AddDate(0, 0, -7), today.AddDate(0, 0, 1), nil
	case "TheNextWeek":
		return today, today.AddDate(0, 0, 7), nil
	case "TheLastMonth":
		return today.AddDate(0, 0, -30), today.AddDate(0, 0, 1), nil
	case "TheNextMonth":
		return today, today.AddDate(0, 0, 30), nil
	}
	return time.Time{}, time.Time{}, invalidFilter("unknown date value %q", vals[0])
}
