package worker_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/worker"
)

func TestDecodeAnswer(t *testing.T) {
	tests := []struct {
		file        string
		code        contract.Code // of the answer; "" when accepted
		unreachable bool
		rowCodes    []contract.Code // of each row's decoding; "" when it decodes
	}{
		{file: "accepted.json", rowCodes: []contract.Code{""}},
		{file: "extra_field.json", rowCodes: []contract.Code{contract.CodeWorkRow}},
		{file: "refused.json", code: contract.CodeLeaseSuperseded},
		{file: "unknown_field.json", unreachable: true},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", "answers", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			a, err := worker.DecodeAnswer(raw)
			if got := errors.Is(err, worker.ErrUnreachable); got != tt.unreachable {
				t.Fatalf("DecodeAnswer(%s) = %v; unreachable %v, want %v", tt.file, err, got, tt.unreachable)
			}
			if !tt.unreachable && contract.CodeOf(err) != tt.code {
				t.Fatalf("DecodeAnswer(%s) = %v, want code %q", tt.file, err, tt.code)
			}
			if len(a.Rows) != len(tt.rowCodes) {
				t.Fatalf("DecodeAnswer(%s) has %d rows, want %d", tt.file, len(a.Rows), len(tt.rowCodes))
			}
			for i, raw := range a.Rows {
				_, err := worker.DecodeRow(raw)
				if got := contract.CodeOf(err); got != tt.rowCodes[i] {
					t.Errorf("DecodeRow(row %d) = %v, want code %q", i, err, tt.rowCodes[i])
				}
			}
		})
	}
}

// FuzzDecodeAnswer checks that any answer either decodes, with rows that decode or are
// refused with work_row, or is refused with a code or as unreadable — never a panic.
func FuzzDecodeAnswer(f *testing.F) {
	ents, _ := os.ReadDir(filepath.Join("testdata", "answers"))
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join("testdata", "answers", e.Name()))
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		a, err := worker.DecodeAnswer(raw)
		if err != nil {
			if !errors.Is(err, worker.ErrUnreachable) && contract.CodeOf(err) == "" {
				t.Fatalf("DecodeAnswer refused without a code: %v", err)
			}
			return
		}
		for _, r := range a.Rows {
			row, err := worker.DecodeRow(r)
			if err != nil {
				if contract.CodeOf(err) != contract.CodeWorkRow {
					t.Fatalf("DecodeRow refused with %v, want work_row", err)
				}
				continue
			}
			if row.ID == "" || row.Grant == "" {
				t.Fatalf("DecodeRow accepted an incomplete row %+v", row)
			}
		}
	})
}
