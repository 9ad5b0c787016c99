package material_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/go-pdf/fpdf"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/material"
)

// pdfOf makes a PDF of one page per text, here, so no binary fixture is needed.
func pdfOf(t *testing.T, texts ...string) []byte {
	t.Helper()
	f := fpdf.New("P", "mm", "A4", "")
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f.SetCreationDate(at)
	f.SetModificationDate(at)
	for _, s := range texts {
		f.AddPage()
		f.SetFont("Helvetica", "", 12)
		f.Cell(40, 10, s)
	}
	var b bytes.Buffer
	if err := f.Output(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestReadPDF: a PDF is read as its pages' text, a page at a time or by offset across
// pages; the slice a page read returns is the slice a read by its offset and length
// returns, which is how the runtime finds a reference's text again.
func TestReadPDF(t *testing.T) {
	a := material.Area{Dir: t.TempDir()}
	doc, err := a.Put("plan.pdf", bytes.NewReader(pdfOf(t, "Page one: the preamble.", "Page two: the launch code is 7-4-1-9.", "Page three: the end.")))
	if err != nil {
		t.Fatal(err)
	}
	if doc.MediaType != "application/pdf" {
		t.Errorf("the media type = %q, want application/pdf", doc.MediaType)
	}
	txt, err := a.Put("notes.txt", strings.NewReader("plain notes"))
	if err != nil {
		t.Fatal(err)
	}
	broken, err := a.Put("broken.pdf", strings.NewReader("%PDF-1.7\nnot really a PDF"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		digest  string
		q       material.Query
		want    string // a part of the text
		notWant string
		trunc   bool
		code    contract.Code
	}{
		{"page two", doc.SHA256, material.Query{Page: 2}, "launch code is 7-4-1-9.", "preamble", false, ""},
		{"page two, bounded", doc.SHA256, material.Query{Page: 2, Limit: 8}, "", "7-4-1-9", true, ""},
		{"page two, from an offset in it", doc.SHA256, material.Query{Page: 2, Offset: 3}, "7-4-1-9", "the end", false, ""},
		{"the whole document", doc.SHA256, material.Query{}, "the end.", "", false, ""},
		{"a page past the last", doc.SHA256, material.Query{Page: 4}, "", "", false, contract.CodeMaterialInvalid},
		{"a page of a text file", txt.SHA256, material.Query{Page: 1}, "", "", false, contract.CodeMaterialInvalid},
		{"a PDF that cannot be read", broken.SHA256, material.Query{}, "", "", false, contract.CodeMaterialInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := a.Read(tt.digest, tt.q)
			if tt.code != "" {
				if code(err) != tt.code {
					t.Fatalf("Read = %+v, %v; want %s", got, err, tt.code)
				}
				if !strings.Contains(err.Error(), "page") && !strings.Contains(err.Error(), "PDF") {
					t.Errorf("the refusal %q says nothing of the page or the PDF", err)
				}
				return
			}
			if err != nil || !strings.Contains(got.Text, tt.want) || tt.notWant != "" && strings.Contains(got.Text, tt.notWant) || got.Truncated != tt.trunc {
				t.Fatalf("Read(%+v) = %+v, %v; want %q, not %q, truncated %v", tt.q, got, err, tt.want, tt.notWant, tt.trunc)
			}
			if got.Pages != 3 || got.Page != tt.q.Page {
				t.Errorf("Read(%+v) says page %d of %d, want %d of 3", tt.q, got.Page, got.Pages, tt.q.Page)
			}
			again, err := a.ReadText(tt.digest, got.Offset, max(int64(len(got.Text)), 1))
			if err != nil || material.Ref(again) != material.Ref(got) {
				t.Errorf("ReadText(%d, %d) = %+v, %v; want the same slice, as the runtime reads a reference", got.Offset, len(got.Text), again, err)
			}
		})
	}
}
