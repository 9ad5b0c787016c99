// Package pdftext extracts the text of a PDF's pages, within bounds of time and size, so
// that a hostile PDF cannot hang or swamp the process reading it (docs/materials.md).
//
// The parsing is github.com/ledongthuc/pdf's (rsc.io/pdf with text extraction); this
// package shows each page's text operators' strings through the page's fonts, one line a
// text object, and adds the bounds the library lacks: it reads the file only through a
// reader that stops the parse once the deadline passes (the library reads every object
// from the file again each time it is used, so no loop of its own escapes that check),
// stops when the text grows past its bound, and turns the library's panics on malformed
// input into an error.
package pdftext

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
)

// Bounds of one extraction.
const (
	DefaultTimeout = 5 * time.Second // the whole document's
	MaxPages       = 5000            // pages read at most; a longer document is refused
	MaxText        = 8 << 20         // bytes of text at most, all pages together
)

// Errors an extraction returns; each is wrapped with what was found.
var (
	ErrNotPDF    = errors.New("not a PDF")
	ErrMalformed = errors.New("the PDF cannot be read")
	ErrTimeout   = errors.New("the PDF took too long to read")
	ErrTooLarge  = errors.New("the PDF has too many pages or too much text")
)

// IsPDF reports whether b begins as a PDF file does.
func IsPDF(b []byte) bool { return bytes.HasPrefix(b, []byte("%PDF-")) }

// stop is the panic that ends a parse from inside the library; it carries the error.
// It is an error itself, as the library's own recover keeps an error it catches.
type stop struct{ err error }

func (s stop) Error() string { return s.err.Error() }
func (s stop) Unwrap() error { return s.err }

// guard is the file as the library reads it: every read checks the deadline.
type guard struct {
	r        *bytes.Reader
	deadline time.Time
}

func (g guard) ReadAt(p []byte, off int64) (int, error) {
	if time.Now().After(g.deadline) {
		panic(stop{ErrTimeout})
	}
	return g.r.ReadAt(p, off)
}

// Pages returns the text of each page of the PDF b, in order, each valid UTF-8. timeout
// 0 is DefaultTimeout. An encrypted PDF, one the library cannot parse, one over the
// bounds, or one that is not read within the timeout is refused.
func Pages(b []byte, timeout time.Duration) (pages []string, err error) {
	if !IsPDF(b) {
		return nil, ErrNotPDF
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	g := guard{r: bytes.NewReader(b), deadline: time.Now().Add(timeout)}
	defer func() {
		if x := recover(); x != nil {
			pages = nil
			if s, ok := x.(stop); ok {
				err = s.err
				return
			}
			err = fmt.Errorf("%w: %v", ErrMalformed, x)
		}
	}()
	r, err := pdf.NewReaderEncrypted(g, int64(len(b)), func() string { return "" })
	if err != nil {
		// NewReaderEncrypted turns its own panics into errors, a deadline's included.
		if s, ok := errors.AsType[stop](err); ok {
			return nil, s.err
		}
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	n := r.NumPage()
	if n < 0 || n > MaxPages {
		return nil, fmt.Errorf("%w: it says it has %d pages, over %d", ErrTooLarge, n, MaxPages)
	}
	total := 0
	for i := 1; i <= n; i++ {
		text := pageText(r.Page(i), MaxText-total)
		total += len(text)
		pages = append(pages, text)
	}
	return pages, nil
}

// pageText is the text of p: the strings its text operators show, decoded through the
// page's fonts, a newline before each text object. It stops the parse when the text
// would pass room bytes.
func pageText(p pdf.Page, room int) string {
	if p.V.IsNull() || p.V.Key("Contents").Kind() == pdf.Null {
		return ""
	}
	fonts := map[string]*pdf.Font{}
	for _, name := range p.Fonts() {
		f := p.Font(name)
		fonts[name] = &f
	}
	var enc pdf.TextEncoding
	var out strings.Builder
	write := func(s string) {
		s = strings.ToValidUTF8(s, string(utf8.RuneError))
		if out.Len()+len(s) > room {
			panic(stop{fmt.Errorf("%w: over %d bytes of text", ErrTooLarge, MaxText)})
		}
		out.WriteString(s)
	}
	show := func(raw string) {
		if enc != nil {
			raw = enc.Decode(raw)
		}
		write(raw)
	}
	pdf.Interpret(p.V.Key("Contents"), func(stk *pdf.Stack, op string) {
		args := make([]pdf.Value, stk.Len())
		for i := len(args) - 1; i >= 0; i-- {
			args[i] = stk.Pop()
		}
		switch op {
		case "BT", "T*":
			write("\n")
		case "Tf":
			enc = nil
			if len(args) == 2 {
				if f, ok := fonts[args[0].Name()]; ok {
					enc = f.Encoder()
				}
			}
		case "Tj", "'":
			if len(args) == 1 {
				show(args[0].RawString())
			}
		case "\"":
			if len(args) == 3 {
				show(args[2].RawString())
			}
		case "TJ":
			if len(args) == 1 {
				for i := 0; i < args[0].Len(); i++ {
					if x := args[0].Index(i); x.Kind() == pdf.String {
						show(x.RawString())
					}
				}
			}
		}
	})
	return out.String()
}
