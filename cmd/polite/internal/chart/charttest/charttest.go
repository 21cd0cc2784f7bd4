// Package charttest reads back the command's SVG charts, for tests.
package charttest

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
)

// Elements parses an SVG document and counts its elements by "name.class",
// or "name" for an element without a class. It fails on malformed XML and
// on a document whose root is not an svg element.
func Elements(doc []byte) (map[string]int, error) {
	counts := make(map[string]int)
	dec := xml.NewDecoder(bytes.NewReader(doc))
	root := ""
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("malformed SVG: %w", err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if root == "" {
			root = se.Name.Space + " " + se.Name.Local
		}
		key := se.Name.Local
		for _, a := range se.Attr {
			if a.Name.Local == "class" {
				key += "." + a.Value
			}
		}
		counts[key]++
	}
	if root != "http://www.w3.org/2000/svg svg" {
		return nil, fmt.Errorf("root element %q; want an svg element", root)
	}
	return counts, nil
}
