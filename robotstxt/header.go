package robotstxt

import (
	"errors"
	"net/http"
	"strings"
)

// HeaderUsage returns the usage preferences that a response's header
// states for its content: its Content-Usage field
// (draft-ietf-aipref-attach-05 §2) and its Content-Signal field, each
// read as [ParseContentUsage] and [ParseContentSignal] read them, their
// field lines joined, and combined. A field that does not parse states
// nothing, and HeaderUsage returns the other's preferences with an error
// that matches [ErrBadUsage].
func HeaderUsage(h http.Header) (Usage, error) {
	var pref Usage
	var errs []error
	for _, f := range []struct {
		name  string
		parse func(string) (Usage, error)
	}{{"Content-Usage", ParseContentUsage}, {"Content-Signal", ParseContentSignal}} {
		lines := h.Values(f.name)
		if len(lines) == 0 {
			continue
		}
		u, err := f.parse(strings.Join(lines, ", "))
		if err != nil {
			errs = append(errs, err)
		}
		pref = pref.Combine(u)
	}
	return pref, errors.Join(errs...)
}
