package main

// A requestCheck holds each request of a crawler to a rule beyond the
// Allow and Disallow rules of robots.txt, and adds a column to the report:
// its violations per crawler, with examples, in every format, and a
// violation for -fail-on.
//
// It is the seam for the AI usage preferences of robots.txt: a check that
// counts the requests to content whose preference is "n" for the purpose
// the crawler declares, for the crawlers that declare one. Until the engine
// reads those preferences, audit runs no check, and the report has no such
// column.
type requestCheck interface {
	// Name is the column's heading and the key of its counts in JSON and
	// CSV, as "usage_pref".
	Name() string
	// Judge reports whether the request r of crawler c broke the check,
	// under the robots.txt version v in force at its start (nil before the
	// first), and says what it broke.
	Judge(c *auditRow, v *robotsVersion, r *logRecord) (broke bool, what string)
}
