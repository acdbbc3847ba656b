package hq

import "time"

// TimeLayout is how times are stored in the database: UTC, millisecond precision, fixed width,
// so stored times sort as text and read plainly in sqlite3.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// FormatTime renders t for storage.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// ParseTime reads a stored time; the zero time when s is not one.
func ParseTime(s string) time.Time {
	t, err := time.Parse(TimeLayout, s)
	if err != nil {
		return time.Time{}
	}
	return t
}
