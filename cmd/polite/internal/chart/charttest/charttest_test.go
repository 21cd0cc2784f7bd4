package charttest

import (
	"maps"
	"testing"
)

func TestElements(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want map[string]int // nil for an error
	}{
		{"classes", `<svg xmlns="http://www.w3.org/2000/svg"><line class="req"/><line class="req"/><line/><text class="x">a<title>t</title></text></svg>`,
			map[string]int{"svg": 1, "line.req": 2, "line": 1, "text.x": 1, "title": 1}},
		{"malformed", `<svg xmlns="http://www.w3.org/2000/svg"><text>a & b</text></svg>`, nil},
		{"not svg", `<html><body/></html>`, nil},
		{"no namespace", `<svg><line/></svg>`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Elements([]byte(tt.doc))
			switch {
			case tt.want == nil && err == nil:
				t.Errorf("Elements = %v; want an error", got)
			case tt.want != nil && (err != nil || !maps.Equal(got, tt.want)):
				t.Errorf("Elements = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}
