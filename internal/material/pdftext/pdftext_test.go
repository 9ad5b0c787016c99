package pdftext_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/go-pdf/fpdf"

	"github.com/docketrun/docket/internal/material/pdftext"
)

// makePDF writes a PDF of one page per text, made here so the tests need no binary
// fixture; compress chooses whether its content streams are deflated.
func makePDF(t testing.TB, compress bool, texts ...string) []byte {
	t.Helper()
	f := fpdf.New("P", "mm", "A4", "")
	f.SetCompression(compress)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f.SetCreationDate(at)
	f.SetModificationDate(at)
	for _, s := range texts {
		f.AddPage()
		f.SetFont("Helvetica", "", 12)
		for l := range strings.Lines(s) {
			f.Cell(40, 10, strings.TrimSuffix(l, "\n"))
			f.Ln(10)
		}
	}
	var b bytes.Buffer
	if err := f.Output(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestPages(t *testing.T) {
	two := makePDF(t, true, "First page: the launch code is 7-4-1-9.", "Second page: HYACINTH.\nA second line.")
	tests := []struct {
		name    string
		pdf     []byte
		timeout time.Duration
		want    []string // substrings of each page, in order
		err     error
	}{
		{"two pages, deflated", two, 0, []string{"the launch code is 7-4-1-9.", "HYACINTH."}, nil},
		{"one page, plain", makePDF(t, false, "Plain content stream."), 0, []string{"Plain content stream."}, nil},
		{"no page text", makePDF(t, true, ""), 0, []string{""}, nil},
		{"not a PDF", []byte("hello, world"), 0, nil, pdftext.ErrNotPDF},
		{"cut in half", two[:len(two)/2], 0, nil, pdftext.ErrMalformed},
		{"only a header", []byte("%PDF-1.7\n"), 0, nil, pdftext.ErrMalformed},
		{"past its deadline", two, time.Nanosecond, nil, pdftext.ErrTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := pdftext.Pages(tt.pdf, tt.timeout)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("Pages = %q, %v; want %v", got, err, tt.err)
				}
				return
			}
			if err != nil || len(got) != len(tt.want) {
				t.Fatalf("Pages = %q, %v; want %d pages", got, err, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("page %d = %q, want it to hold %q", i+1, got[i], w)
				}
			}
		})
	}
	if got, _ := pdftext.Pages(two, 0); strings.Contains(got[0], "HYACINTH") || !strings.Contains(got[1], "A second line.") {
		t.Errorf("the pages = %q; each page holds its own text only", got)
	}
}

// FuzzPages: whatever the bytes, Pages returns within its timeout and a little more,
// never panics, and returns valid UTF-8 within MaxText.
func FuzzPages(f *testing.F) {
	f.Add(makePDF(f, true, "Fuzz seed one.", "Page two."))
	f.Add(makePDF(f, false, "Plain seed."))
	f.Add([]byte("%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 1 0 R >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF"))
	f.Add([]byte("%PDF-"))
	f.Fuzz(func(t *testing.T, b []byte) {
		const timeout = time.Second
		start := time.Now()
		pages, err := pdftext.Pages(b, timeout)
		if took := time.Since(start); took > 3*timeout {
			t.Fatalf("Pages took %s, over its timeout of %s", took, timeout)
		}
		if err != nil {
			return
		}
		total := 0
		for _, p := range pages {
			total += len(p)
			if !utf8.ValidString(p) {
				t.Fatalf("a page's text is not UTF-8: %q", p)
			}
		}
		if total > pdftext.MaxText {
			t.Fatalf("%d bytes of text, over %d", total, pdftext.MaxText)
		}
	})
}
