package audit

import (
	"fmt"
	"slices"
	"strings"
)

// The fields audit takes from a JSON log line.
type jsonField uint8

const (
	fieldNone       jsonField = iota
	fieldTime                 // RFC 3339, the Common Log Format's time, or Unix seconds (ms, µs, ns by size)
	fieldUA                   // the User-Agent
	fieldRequest              // the request line, "GET /a HTTP/1.1"
	fieldPath                 // the request-target alone, "/a?b", or a URL
	fieldStatus               // the status code
	fieldBytes                // the bytes sent
	fieldHost                 // the virtual host
	fieldRetryAfter           // the answer's Retry-After: seconds or an HTTP-date
	fieldDuration             // seconds from start to answer; the time is then the answer's
	numJSONFields
)

var jsonFieldNames = [numJSONFields]string{"", "time", "ua", "request", "path", "status", "bytes", "host", "retry_after", "duration"}

// defaultJSONKeys are the keys each field is looked for under, the first
// present winning: nginx's variable names, Caddy's and the Elastic Common
// Schema's, and plain ones. A dot descends into an object, and also
// matches a key written with the dot. The first element of an array
// stands for the array, as Caddy's header values are.
var defaultJSONKeys = [numJSONFields][]string{
	fieldTime:       {"time", "timestamp", "@timestamp", "ts", "time_iso8601", "time_local", "msec", "date"},
	fieldUA:         {"user_agent", "http_user_agent", "user_agent.original", "useragent", "userAgent", "agent", "ua", "request.headers.User-Agent"},
	fieldRequest:    {"request"},
	fieldPath:       {"request_uri", "uri", "path", "url", "url.original", "request.uri"},
	fieldStatus:     {"status", "status_code", "http.response.status_code"},
	fieldBytes:      {"body_bytes_sent", "bytes_sent", "bytes", "size", "http.response.body.bytes"},
	fieldHost:       {"host", "vhost", "server_name", "http_host", "url.domain", "request.host"},
	fieldRetryAfter: {"retry_after", "sent_http_retry_after", "resp_headers.Retry-After"},
	fieldDuration:   {"request_time", "duration"},
}

// A jsonNode is a key of the lines' objects that holds a field, or an
// object holding some.
type jsonNode struct {
	field    jsonField
	rank     uint8 // the key's place in its field's list: the lowest present wins
	children map[string]*jsonNode
}

// Fields are the keys under which JSON log lines give the fields that the
// audit reads, by field: time, ua, request, path, status, bytes, host,
// retry_after and duration. A field that Fields names is looked for under
// its keys alone, the first present winning; the others under their
// default keys (nginx's variable names, Caddy's, the Elastic Common
// Schema's and plain ones), but for keys that Fields gives another field.
// A dot in a key descends into an object, and also matches a key written
// with the dot. A name that is no field is ignored.
//
// As a flag.Value, as polite audit's -fields, Fields reads name=key
// pairs separated by commas: -fields time=when,ua=client.agent.
type Fields map[string][]string

// String returns "": a flag's default, which is none.
func (f Fields) String() string { return "" }

// Set adds the name=key pairs of v, separated by commas.
func (f Fields) Set(v string) error {
	for pair := range strings.SplitSeq(v, ",") {
		name, key, ok := strings.Cut(strings.TrimSpace(pair), "=")
		switch {
		case !ok || key == "":
			return fmt.Errorf("%q is not name=key", pair)
		case slices.Index(jsonFieldNames[:], name) < 1:
			return fmt.Errorf("unknown field %q; the fields are %s", name, strings.Join(jsonFieldNames[1:], ", "))
		}
		f[name] = append(f[name], key)
	}
	return nil
}

// newJSONTree returns the keys to look for: those of mapping, and the
// defaults of the fields it does not name, but for keys it gives another
// field.
func newJSONTree(mapping Fields) *jsonNode {
	root := &jsonNode{}
	taken := make(map[string]bool)
	for _, keys := range mapping {
		for _, k := range keys {
			taken[k] = true
		}
	}
	for field := fieldNone + 1; field < numJSONFields; field++ {
		keys, ok := mapping[jsonFieldNames[field]]
		if !ok {
			keys = slices.DeleteFunc(slices.Clone(defaultJSONKeys[field]), func(k string) bool { return taken[k] })
		}
		for rank, key := range keys {
			root.add([]string{key}, field, rank)
			if strings.Contains(key, ".") {
				root.add(strings.Split(key, "."), field, rank)
			}
		}
	}
	return root
}

func (n *jsonNode) add(path []string, field jsonField, rank int) {
	if n.children == nil {
		n.children = make(map[string]*jsonNode)
	}
	child := n.children[path[0]]
	if child == nil {
		child = &jsonNode{}
		n.children[path[0]] = child
	}
	if len(path) > 1 {
		child.add(path[1:], field, rank)
		return
	}
	if child.field == fieldNone {
		child.field, child.rank = field, uint8(min(rank, 254))
	}
}
