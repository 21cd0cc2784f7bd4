package politeredis

import (
	"strconv"
	"time"
)

// scriptArgs returns the arguments of a script: the instant on clock, for
// tests, or "" when clock is nil, for the server's TIME; then extra, with
// room for more after them.
func scriptArgs(clock func() time.Time, room int, extra ...string) []any {
	a := make([]any, 0, 1+len(extra)+room)
	if clock != nil {
		a = append(a, strconv.FormatInt(clock().UnixMicro(), 10))
	} else {
		a = append(a, "")
	}
	for _, s := range extra {
		a = append(a, s)
	}
	return a
}
