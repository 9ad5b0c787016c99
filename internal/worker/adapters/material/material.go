// Package material provides the built-in material adapter: docket.material.read@1 reads
// a slice of a material's text from the material area, bound to the worker as a file
// Source, and returns it by reference, never as text (docs/materials.md).
package material

import (
	"context"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/material"
	"github.com/docketrun/docket/internal/worker"
)

// Adapter runs docket.material.read@1. The zero value is ready; it is safe for
// concurrent use.
type Adapter struct{}

var (
	_ worker.Adapter     = Adapter{}
	_ worker.ToolChecker = Adapter{}
)

// CheckTool refuses a material Tool whose entry is not "read".
func (Adapter) CheckTool(id contract.ToolID, t worker.Tool) error {
	if t.Entry != "read" {
		return contract.Errorf(contract.CodeMaterialInvalid, "tool %s asks the material adapter for %.40q; it only reads.", id, t.Entry)
	}
	return nil
}

// Execute reads the slice the call names (by offset and limit, or a PDF's page) and
// returns one row: the material's digest and size, the slice's offset, length and
// whether more follows, the page read and a PDF's pages (0 for a text file), and in "text" the
// slice's reference ([material.Ref]), which only the runtime on this machine turns
// back into text, when its disclosure is allowed.
func (a Adapter) Execute(_ context.Context, c worker.Call) (worker.Outcome, error) {
	if err := a.CheckTool(c.Tool, c.Def); err != nil {
		return worker.Refuse(err)
	}
	if c.Source == nil || c.Source.Type != "file" {
		return worker.Refuse(contract.Errorf(contract.CodeSourceTypeMatch, "the material read runs against the file Source of the material area; bind one (docs/materials.md)."))
	}
	var q material.Query
	for name, to := range map[string]*int64{"offset": &q.Offset, "limit": &q.Limit, "page": &q.Page} {
		if v, ok := c.Args[name]; ok {
			*to = v.Int()
		}
	}
	t, err := material.Area{Dir: c.Source.Root}.Read(c.Args["material"].Str(), q)
	if err != nil {
		return worker.Refuse(err)
	}
	size, _ := contract.IntValue(t.Size)
	offset, _ := contract.IntValue(t.Offset)
	n, _ := contract.IntValue(int64(len(t.Text)))
	page, _ := contract.IntValue(t.Page)
	pages, _ := contract.IntValue(t.Pages)
	return worker.OK(contract.Args{
		"material":  contract.StringValue(t.SHA256),
		"size":      size,
		"offset":    offset,
		"bytes":     n,
		"truncated": contract.BoolValue(t.Truncated),
		"page":      page,
		"pages":     pages,
		"text":      contract.StringValue(material.Ref(t)),
	})
}
