// Package hwtags decides which machines a tag with an XPath definition
// selects, over the hardware details commissioning stored (lshw's XML,
// MAAS's 00-maas-01-lshw result), as MAAS's populate_tags does: the
// expression is evaluated with lshw's document as the root, and a
// non-empty node set, true, a non-zero number or a non-empty string is a
// match. It is pure.
package hwtags

import (
	"bytes"
	"fmt"

	"github.com/antchfx/xmlquery"
	"github.com/antchfx/xpath"
)

// Check compiles a definition; its error is MAAS's words.
func Check(definition string) error {
	if _, err := xpath.Compile(definition); err != nil {
		return fmt.Errorf("Invalid XPath expression: %v", err)
	}
	return nil
}

// Doc is a parsed hardware details document.
type Doc struct{ root *xmlquery.Node }

// Parse reads lshw's XML.
func Parse(lshw []byte) (*Doc, error) {
	root, err := xmlquery.Parse(bytes.NewReader(lshw))
	if err != nil {
		return nil, fmt.Errorf("hardware details: %w", err)
	}
	return &Doc{root: root}, nil
}

// Match says whether the definition selects the document.
func (d *Doc) Match(definition string) (bool, error) {
	expr, err := xpath.Compile(definition)
	if err != nil {
		return false, fmt.Errorf("Invalid XPath expression: %v", err)
	}
	switch v := expr.Evaluate(xmlquery.CreateXPathNavigator(d.root)).(type) {
	case bool:
		return v, nil
	case float64:
		return v != 0 && v == v, nil
	case string:
		return v != "", nil
	case *xpath.NodeIterator:
		return v.MoveNext(), nil
	default:
		return false, fmt.Errorf("XPath expression %q gives %T", definition, v)
	}
}
