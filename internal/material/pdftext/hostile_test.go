package pdftext_test

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/material/pdftext"
)

// rawPDF writes objs as objects 1… of a PDF with a correct cross-reference table, object
// 1 its catalog; a stream's bytes go in as given.
func rawPDF(objs ...string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

func deflated(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	w := zlib.NewWriter(&b)
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream", b.Len(), b.String())
}

// TestPages_Hostile: a page tree that holds itself, which would walk forever, ends at the
// deadline; a small deflated stream that shows more text than the bound ends at the
// bound. Neither takes much longer than the deadline.
func TestPages_Hostile(t *testing.T) {
	shows := strings.Repeat("BT ("+strings.Repeat("A", 1<<20)+") Tj ET\n", 12) // 12 MiB of text, deflated to little
	tests := []struct {
		name    string
		pdf     []byte
		timeout time.Duration
		err     error
	}{
		{"a page tree that holds itself", rawPDF("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Count 5 /Kids [2 0 R] >>"), 300 * time.Millisecond, pdftext.ErrTimeout},
		{"more text than the bound", rawPDF("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Count 1 /Kids [3 0 R] >>",
			"<< /Type /Page /Parent 2 0 R /Contents 4 0 R >>", deflated(t, shows)), 20 * time.Second, pdftext.ErrTooLarge},
		{"a page that is its own parent", rawPDF("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Count 1 /Kids [3 0 R] >>",
			"<< /Type /Page /Parent 3 0 R /Contents 4 0 R >>", deflated(t, "BT (hello) Tj ET")), 300 * time.Millisecond, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			pages, err := pdftext.Pages(tt.pdf, tt.timeout)
			took := time.Since(start)
			if took > 2*tt.timeout+time.Second {
				t.Errorf("Pages took %s with a timeout of %s", took, tt.timeout)
			}
			t.Logf("%s: %v", took, err)
			if tt.err == nil {
				if err != nil && !errors.Is(err, pdftext.ErrTimeout) && !errors.Is(err, pdftext.ErrMalformed) {
					t.Errorf("Pages = %d pages, %v; want text, or a refusal", len(pages), err)
				}
				return
			}
			if !errors.Is(err, tt.err) {
				t.Errorf("Pages = %d pages, %v; want %v", len(pages), err, tt.err)
			}
		})
	}
}
