package material_test

import (
	"strings"
	"testing"

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
