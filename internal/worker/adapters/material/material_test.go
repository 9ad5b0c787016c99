package material_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/go-pdf/fpdf"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/material"
	"github.com/docketrun/docket/internal/worker"
	materialadapter "github.com/docketrun/docket/internal/worker/adapters/material"
)

func TestRead_ReturnsAReferenceNeverTheText(t *testing.T) {
	area := material.Area{Dir: t.TempDir()}
	m, err := area.Put("notes.txt", strings.NewReader("quarterly figures: 41 widgets"))
	if err != nil {
		t.Fatal(err)
	}
	def := worker.Tool{Adapter: worker.AdapterMaterial, Entry: "read", SourceTypes: []string{"file"}}
	lim, _ := contract.IntValue(9)
	out, err := materialadapter.Adapter{}.Execute(t.Context(), worker.Call{Tool: worker.MaterialReadTool, Def: def,
		Source: &worker.Source{Name: "materials", Type: "file", Root: area.Dir},
		Args:   contract.Args{"material": contract.StringValue(m.SHA256), "limit": lim}})
	if err != nil || out.Status != worker.StatusOK || len(out.Rows) != 1 {
		t.Fatalf("Execute = %+v, %v", out, err)
	}
	row := out.Rows[0]
	want, err := area.ReadText(m.SHA256, 0, 9)
	if err != nil {
		t.Fatal(err)
	}
	if got := row["text"].Str(); got != material.Ref(want) {
		t.Errorf("text = %q, want the reference %q", got, material.Ref(want))
	}
	for k, v := range row {
		if strings.Contains(v.Str(), "quarterly") {
			t.Errorf("row column %s holds the material's text: %q", k, v.Str())
		}
	}
	if !row["truncated"].Bool() || row["bytes"].Int() != 9 || row["size"].Int() != m.Size {
		t.Errorf("row = %v", row)
	}

	out, _ = materialadapter.Adapter{}.Execute(t.Context(), worker.Call{Tool: worker.MaterialReadTool, Def: def,
		Source: &worker.Source{Name: "materials", Type: "file", Root: area.Dir},
		Args:   contract.Args{"material": contract.StringValue("sha256:" + strings.Repeat("0", 64))}})
	if out.Status != worker.StatusRefused || out.Code != contract.CodeMaterialNotFound {
		t.Errorf("a missing material = %+v, want refused material_not_found", out)
	}
}

// TestRead_PDFPage: a PDF's page is read as its text and returned by reference, with the
// page read and the page count; a page past the last is refused.
func TestRead_PDFPage(t *testing.T) {
	area := material.Area{Dir: t.TempDir()}
	f := fpdf.New("P", "mm", "A4", "")
	for _, s := range []string{"Cover page.", "The figures: 41 widgets."} {
		f.AddPage()
		f.SetFont("Helvetica", "", 12)
		f.Cell(40, 10, s)
	}
	var b bytes.Buffer
	if err := f.Output(&b); err != nil {
		t.Fatal(err)
	}
	m, err := area.Put("figures.pdf", &b)
	if err != nil {
		t.Fatal(err)
	}
	def := worker.Tool{Adapter: worker.AdapterMaterial, Entry: "read", SourceTypes: []string{"file"}}
	run := func(page int64) worker.Outcome {
		p, _ := contract.IntValue(page)
		// A refusal comes back as the Outcome and its error alike.
		out, _ := materialadapter.Adapter{}.Execute(t.Context(), worker.Call{Tool: worker.MaterialReadTool, Def: def,
			Source: &worker.Source{Name: "materials", Type: "file", Root: area.Dir},
			Args:   contract.Args{"material": contract.StringValue(m.SHA256), "page": p}})
		return out
	}
	out := run(2)
	if out.Status != worker.StatusOK || len(out.Rows) != 1 {
		t.Fatalf("Execute(page 2) = %+v", out)
	}
	row := out.Rows[0]
	want, err := area.Read(m.SHA256, material.Query{Page: 2})
	if err != nil || !strings.Contains(want.Text, "41 widgets") {
		t.Fatalf("Read(page 2) = %+v, %v", want, err)
	}
	if row["text"].Str() != material.Ref(want) || row["page"].Int() != 2 || row["pages"].Int() != 2 || strings.Contains(row["text"].Str(), "widgets") {
		t.Errorf("row = %v; want page 2 of 2 by reference %q", row, material.Ref(want))
	}
	if out := run(3); out.Status != worker.StatusRefused || out.Code != contract.CodeMaterialInvalid {
		t.Errorf("Execute(page 3) = %+v, want refused material_invalid", out)
	}
}
