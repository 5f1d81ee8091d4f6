package taskecho

import "time"

// timeNow stamps messages and logs sent without createdAt (millisecond precision, as stored).
func timeNow() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }
