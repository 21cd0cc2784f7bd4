package audit

import (
	"strings"

	"github.com/polite-go/polite/robotstxt"
)

// A requestCheck holds each request of a crawler to a rule beyond the
// Allow and Disallow rules of robots.txt, and adds a column to the report:
// its violations per crawler, with examples, in every format, counted
// among its violations.
type requestCheck interface {
	// Name is the column's heading and the key of its counts in JSON and
	// CSV, as "usage_pref".
	Name() string
	// Judge reports whether the request r of crawler c broke the check,
	// under the group g that binds c in the robots.txt version in force
	// at its start (nil before the first), and says what it broke. allowed
	// reports that r is for a path that g lets c fetch: not robots.txt
	// itself, nor a request-target that is no path.
	Judge(c *crawler, g *robotstxt.Group, allowed bool, r *logRecord) (broke bool, what string)
}

// usageCheck is the check of the AI usage preferences of robots.txt: a
// request breaks it when it is for content whose preference is "n"
// (a Content-Usage rule or a Content-Signal line, in the group that binds
// the crawler, for the request's path) for a use the crawler declares
// in Options.Uses. It judges only the crawlers that declare one.
type usageCheck struct {
	uses map[string][]robotstxt.Category // by crawler name; "*" for every crawler
}

func (usageCheck) Name() string { return "usage_pref" }

func (u usageCheck) Judge(c *crawler, g *robotstxt.Group, allowed bool, r *logRecord) (bool, string) {
	if !allowed || g == nil || g.NumUsageRules() == 0 {
		return false, ""
	}
	uses, ok := u.uses[c.name]
	if !ok {
		uses = u.uses["*"]
	}
	if len(uses) == 0 {
		return false, ""
	}
	path := string(r.target)
	pref, err := g.Usage(path)
	blocked := pref.Disallowed(uses...)
	if err != nil || blocked == (robotstxt.Usage{}) {
		return false, "" // a path the engine does not decide states nothing
	}
	rules, _ := g.UsageRules(path)
	var lines []string
	for _, rule := range rules {
		if rule.Usage.Disallowed(uses...) != (robotstxt.Usage{}) {
			lines = append(lines, rule.String())
		}
	}
	return true, blocked.String() + " (" + strings.Join(lines, "; ") + ")"
}
